; Definitions: @def.<kind> on the node, @name on its name.
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
(module
  (expression_statement
    (assignment left: (identifier) @name) @def.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
;; A module or class attribute bound to a lambda (`key = lambda item: item.rank`): a function by use (a local one
;; inside a function body stays part of it).
(module (expression_statement (assignment left: (identifier) @name right: (lambda)) @def.function))
(class_definition body: (block (expression_statement (assignment left: (identifier) @name right: (lambda)) @def.function)))
