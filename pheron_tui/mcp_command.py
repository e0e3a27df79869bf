"""``pheron-tui mcp list``: start the configured MCP servers, show what they offer, stop."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs

from pheron_tui.config import APP_NAME, Settings
from pheron_tui.core.safety import printable
from pheron_tui.core.tools import ToolRegistry
from pheron_tui.tools.mcp import McpTools, parse_servers


async def run_mcp_list(settings: Settings) -> int:
    specs, problems = parse_servers(settings.mcp_servers, settings.mcp)
    for problem in problems:
        print(printable(f"pheron-tui: {problem}"), file=sys.stderr)
    if not specs:
        print("no MCP servers configured: add [mcp_servers.NAME] to the config file, or --mcp")
        return 1 if problems else 0
    servers = McpTools(specs, Path(platformdirs.user_state_dir(APP_NAME)))
    registry = ToolRegistry()
    servers.start()
    try:
        await servers.settled()
        failed = False
        for server in servers.servers.values():
            chars = servers.spec_chars(server, registry)
            line = f"{server.spec.name}: {server.state}"
            if server.state == "ready":
                line += f", {len(server.tools)} tools, ~{chars // 4:,} tokens of specs"
            elif server.error:
                line += f": {server.error}"
            failed = failed or server.state != "ready"
            print(printable(line))
            for tool in server.tools:
                print(printable(f"  {tool.name}  ({tool.risk})  {tool.description[:70]}"))
        return 1 if failed or problems else 0
    finally:
        await servers.aclose()
