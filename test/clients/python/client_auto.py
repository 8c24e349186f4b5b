"""The steps of test/clients/steps.ts with the Python MCP SDK's high-level Client in its default mode.

Usage: client_auto.py MCP_URL [API_KEY]

`mcp.client.client.Client` negotiates by itself ('auto'): it probes server/discover and speaks
2026-07-28 where the server answers it (no initialize), else falls back to initialize. Against toolport
it must come out at 2026-07-28. Then the same steps as client.py, with the 70 s call kept open by
progress notifications (mcp 2.3.0 has no Tasks extension runtime).

Prints one JSON line: the ClientReport that steps.ts checks.
"""

from __future__ import annotations

from typing import Any

import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from client import LONG_ARGUMENTS, REQUEST_TIMEOUT_SECONDS, print_report, shared_steps


async def run(url: str, key: str | None) -> dict[str, Any]:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            shared = await shared_steps(client)
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
                **shared,
                "long": {
                    "via": "progress",
                    "progressNotes": len(notes),
                    "result": {"isError": bool(long.is_error), "structuredContent": long.structured_content},
                },
            }


if __name__ == "__main__":
    print_report(run, __doc__)
