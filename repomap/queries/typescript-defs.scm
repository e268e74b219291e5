(class_declaration name: (type_identifier) @name) @def.class
(abstract_class_declaration name: (type_identifier) @name) @def.class
(interface_declaration name: (type_identifier) @name) @def.interface
(type_alias_declaration name: (type_identifier) @name) @def.type
(enum_declaration name: (identifier) @name) @def.enum
(internal_module name: (identifier) @name) @def.module
(module name: (identifier) @name) @def.module
(function_signature name: (identifier) @name) @def.function
(method_signature name: (property_identifier) @name) @def.method
(abstract_method_signature name: (property_identifier) @name) @def.method
;; A class field holding a function (`private handler = (e: E): void => {...}`): a method by use.
(public_field_definition name: [(property_identifier) (private_property_identifier)] @name
                         value: [(arrow_function) (function_expression) (generator_function)]) @def.method
