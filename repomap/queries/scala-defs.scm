; Definitions: @def.<kind> on the definition node, @name on its name.
(class_definition name: (identifier) @name) @def.class
(object_definition name: (identifier) @name) @def.class
(trait_definition name: (identifier) @name) @def.trait
(enum_definition name: (identifier) @name) @def.enum
(type_definition name: (type_identifier) @name) @def.type
(function_definition name: (identifier) @name) @def.function
(function_declaration name: (identifier) @name) @def.function
;; Values of a file or a class body, not a function's locals.
(compilation_unit (val_definition pattern: (identifier) @name) @def.constant)
(template_body (val_definition pattern: (identifier) @name) @def.constant)
