(class_declaration name: (identifier) @name) @def.class
(class name: (identifier) @name) @def.class
;; A class field holding a function (`handler = (e) => {...}`, `#h = function () {}`): a method by use.
(field_definition property: [(property_identifier) (private_property_identifier)] @name
                  value: [(arrow_function) (function_expression) (generator_function)]) @def.method
