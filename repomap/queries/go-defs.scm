(function_declaration name: (identifier) @name) @def.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration type: [(type_identifier) @receiver (pointer_type (type_identifier) @receiver)
                                  (generic_type type: (type_identifier) @receiver)
                                  (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(type_spec name: (type_identifier) @name) @def.type
(type_alias name: (type_identifier) @name) @def.type
(method_elem name: (field_identifier) @name) @def.method
(source_file (const_declaration (const_spec name: (identifier) @name) @def.constant))
;; A variable holding a function literal (`var handler = func(w http.ResponseWriter) {...}`): a function by use.
(var_spec name: (identifier) @name value: (expression_list . (func_literal) .)) @def.function
