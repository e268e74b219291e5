; References: @ref.<kind> on the referenced name.
(call_expression (simple_identifier) @ref.call)
(call_expression (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @ref.call.member)))
(import_declaration (identifier) @ref.import)
(inheritance_specifier inherits_from: (user_type (type_identifier) @ref.base))
(attribute (user_type (type_identifier) @ref.decorator))
(parameter (user_type (type_identifier) @ref.annotation))
(type_annotation (user_type (type_identifier) @ref.annotation))
(function_declaration (user_type (type_identifier) @ref.annotation))
