"""The steps of test/clients/steps.ts with the Python MCP SDK's high-level Client in its default mode.

Usage: client_auto.py MCP_URL [API_KEY]

`mcp.client.client.Client` negotiates by itself ('auto'): it probes server/discover and speaks
2026-07-28 where the server answers it (no initialize), else falls back to initialize. Against toolport
it must come out at 2026-07-28. Then the same steps as client.py, with the 70 s call kept open by
progress notifications (mcp 2.3.0 has no Tasks extension runtime).

Prints one JSON line: the ClientReport that steps.ts checks.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from client import LONG_ARGUMENTS, PDF_ARGUMENTS, REQUEST_TIMEOUT_SECONDS, dump, link_of, magic_of


async def run(url: str, key: str | None) -> dict[str, Any]:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = await client.list_tools()
            pdf = await client.call_tool("pdf_generation", PDF_ARGUMENTS)
            link = link_of(dump(pdf)["content"])
            read_result = await client.read_resource(link) if link else None
            prompt = await client.get_prompt("toolport_context")
            notes: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                notes.append(progress)

            long = await client.call_tool(
                "execute_command",
                LONG_ARGUMENTS,
                read_timeout_seconds=REQUEST_TIMEOUT_SECONDS,
                progress_callback=on_progress,
            )
            return {
                "protocolVersion": client.session.protocol_version,
                "tools": [tool.name for tool in tools.tools],
                "pdf": {"isError": pdf.is_error, "link": link},
                "resource": [
                    {"uri": content["uri"], "mimeType": content.get("mimeType"), "magic": magic_of(content.get("blob"))}
                    for content in (dump(read_result)["contents"] if read_result else [])
                ],
                "prompt": [dump(message) for message in prompt.messages],
                "long": {
                    "via": "progress",
                    "progressNotes": len(notes),
                    "result": {"isError": bool(long.is_error), "structuredContent": long.structured_content},
                },
            }


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    report = anyio.run(run, sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None)
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
