; Definitions: @def.<kind> on the definition node, @name on its name. The Kotlin grammar names few fields: a
; declaration's own identifier is its only `identifier` child.
(class_declaration "interface" (identifier) @name) @def.interface
(class_declaration (modifiers (class_modifier "enum")) (identifier) @name) @def.enum
(class_declaration (identifier) @name) @def.class
(object_declaration (identifier) @name) @def.class
(type_alias (identifier) @name) @def.type
;; An extension function (`fun Int.twice()`) is named by the type it extends, as a Go method by its receiver.
(function_declaration (user_type (identifier) @receiver) "." (identifier) @name) @def.method
(function_declaration (identifier) @name) @def.function
;; Properties of a file or a class, not a function's locals.
(source_file (property_declaration (variable_declaration (identifier) @name)) @def.constant)
(class_body (property_declaration (variable_declaration (identifier) @name)) @def.constant)
