; Definitions: @def.<kind> on the node, @name on its name.
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
(module
  (expression_statement
    (assignment left: (identifier) @name) @def.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
;; A name bound to a lambda (`key = lambda item: item.rank`): a function by use.
(assignment left: (identifier) @name right: (lambda)) @def.function
