; Definitions JavaScript and TypeScript write alike (read with either language's own file).
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @def.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @def.function
(assignment_expression
  left: (member_expression property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @def.function
(pair key: (property_identifier) @name value: [(arrow_function) (function_expression)]) @def.function
(export_statement "default" @name value: [(arrow_function) (function_expression) (generator_function)]) @def.function
(arguments (function_expression name: (identifier) @name) @def.function)
(array (function_expression name: (identifier) @name) @def.function)
