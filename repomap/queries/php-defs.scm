; Definitions: @def.<kind> on the definition node, @name on its name.
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(method_declaration name: (name) @name) @def.method
(function_definition name: (name) @name) @def.function
(const_declaration (const_element (name) @name)) @def.constant
