(namespace_definition name: (namespace_identifier) @name) @def.module
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(class_specifier name: (template_type name: (type_identifier) @name) body: (field_declaration_list)) @def.class
(struct_specifier name: (template_type name: (type_identifier) @name) body: (field_declaration_list)) @def.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.enum
(function_definition declarator: (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name) (destructor_name)] @name)) @def.function
;; An explicit specialization of a function template (`template <> constexpr auto num_bits<int128>() -> int`).
(function_definition declarator: (function_declarator declarator: (template_function name: (identifier) @name))) @def.function
;; A function returning a pointer or a reference (`const Char* parse(...)`, `T& get()`, `T** table()`): its
;; declarator wraps the function declarator in one or two pointer or reference declarators.
(function_definition
  declarator: [(pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name) (destructor_name)] @name))
               (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name) (destructor_name)] @name))
               (pointer_declarator declarator: [(pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name) (destructor_name)] @name))
                                                (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name) (destructor_name)] @name))])
               (reference_declarator (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name) (destructor_name)] @name)))]) @def.function
;; A conversion operator (`operator bool() const`, `A::operator T*()`, declared in its class or defined out of it).
(function_definition declarator: [(operator_cast)
                                  (qualified_identifier name: (operator_cast))
                                  (qualified_identifier name: (qualified_identifier name: (operator_cast)))] @name) @def.function
(declaration declarator: (operator_cast) @name) @def.method
(field_declaration declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name)) @def.method
(field_declaration declarator: [(pointer_declarator declarator: (function_declarator declarator: [(field_identifier) (operator_name)] @name))
                                (reference_declarator (function_declarator declarator: [(field_identifier) (operator_name)] @name))]) @def.method
;; A constructor, destructor or member template declared in its class (`B();`, `~B();`, `template <class U> U as();`).
(field_declaration_list [(declaration declarator: (function_declarator declarator: [(identifier) (destructor_name) (operator_name)] @name)) @def.method
                         (template_declaration (declaration declarator: (function_declarator declarator: [(identifier) (destructor_name) (operator_name)] @name)) @def.method)])
(declaration declarator: (function_declarator declarator: (qualified_identifier) @name)) @def.function
(type_definition declarator: (type_identifier) @name) @def.type
(alias_declaration name: (type_identifier) @name) @def.type
(preproc_function_def name: (identifier) @name) @def.macro
(preproc_def name: (identifier) @name) @def.constant
