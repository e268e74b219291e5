; Definitions: @def.<kind> on the node, @name on its name.
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
(module
  (expression_statement
    (assignment left: (identifier) @name) @def.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
