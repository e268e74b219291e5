(class name: [(constant) (scope_resolution name: (constant))] @name) @def.class
(module name: [(constant) (scope_resolution name: (constant))] @name) @def.module
(method name: (_) @name) @def.method
(singleton_method name: (_) @name) @def.method
(program (assignment left: (constant) @name) @def.constant)
