; Definitions: @def.<kind> on the definition node, @name on its name.
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(struct_declaration name: (identifier) @name) @def.struct
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(delegate_declaration name: (identifier) @name) @def.type
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
;; A property's accessors hold code (`get { ... }`) and a caller reads it like a field.
(property_declaration name: (identifier) @name) @def.method
(local_function_statement name: (identifier) @name) @def.function
