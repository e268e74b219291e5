; Definitions: @def.<kind> on the definition node, @name on its name. One node, `class_declaration`, holds a
; class, a struct, an enum, an actor and an extension, told apart by their keyword.
(class_declaration declaration_kind: "class" name: (type_identifier) @name) @def.class
(class_declaration declaration_kind: "actor" name: (type_identifier) @name) @def.class
(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @def.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @def.enum
;; An extension adds methods to the type it names: they are that type's (`Money.twice`), as in a Rust `impl`.
(class_declaration declaration_kind: "extension" name: (user_type (type_identifier) @name)) @scope
(protocol_declaration name: (type_identifier) @name) @def.interface
(typealias_declaration name: (type_identifier) @name) @def.type
(function_declaration name: (simple_identifier) @name) @def.function
(protocol_function_declaration name: (simple_identifier) @name) @def.method
(init_declaration "init" @name) @def.method
;; Properties of a file or a type (a computed one holds code), not a function's locals.
(source_file (property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.constant)
(class_body (property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.constant)
