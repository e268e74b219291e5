"""bugsleuth as an MCP server for coding agents: `investigate` (report in, diagnosis out, progress per phase),
`get_investigation`, `list_investigations`, `list_repositories`, `repo_map`, and the four read-only tools under the
agents' sandbox. Over stdio (`bugsleuth mcp`, `app.mcp_server.stdio`) or streamable HTTP at `/mcp` under the service
(`app.mcp_server.http`), on the official `mcp` SDK."""
