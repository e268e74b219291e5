(call method: (identifier) @ref.call)
(call method: (constant) @ref.call)
(call receiver: (constant) @ref.call method: (identifier) @_new (#eq? @_new "new"))
(superclass (constant) @ref.base)
(superclass (scope_resolution name: (constant) @ref.base))
(call
  method: (identifier) @_include
  arguments: (argument_list (constant) @ref.base)
  (#match? @_include "^(include|extend|prepend)$"))
(call
  method: (identifier) @_require
  arguments: (argument_list (string (string_content) @ref.import))
  (#match? @_require "^(require|require_relative|load)$"))
