(class_declaration name: (identifier) @name) @def.class
(class name: (identifier) @name) @def.class
