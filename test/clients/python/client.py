"""The steps of test/clients/steps.ts with the Python MCP SDK (`mcp` 2.x), against one toolport server.

Usage: client.py MCP_URL [API_KEY]     (MCP_URL: the server's endpoint, e.g. http://127.0.0.1:8080/mcp)

Connects with mcp.client.streamable_http + ClientSession and initialize() (protocol 2025-11-25), then:
tools/list; tools/call pdf_generation; resources/read of the resource_link it returned; prompts/get
toolport_context; and a 70 s execute_command as a task (tools/call with `task`, tasks/get until it ends,
tasks/result; long_as_task says why the first goes through the session's dispatcher).

Prints one JSON line: the ClientReport that steps.ts checks. Any failure is an exception: a traceback
on stderr and a non-zero exit.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from typing import Any

import anyio
import httpx2
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import CallOptions
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

PDF_ARGUMENTS = {"content": "Hello", "content_type": "text", "output_path": "out/report.pdf"}
LONG_ARGUMENTS = {"command": "sleep 70; echo done", "timeout_seconds": 90}
# Each request (and each task poll) may wait this long: past the 70 s call.
REQUEST_TIMEOUT_SECONDS = 150
TERMINAL = {"completed", "failed", "cancelled"}


def dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def link_of(content: list[dict[str, Any]]) -> str | None:
    """A resource_link block's URI or, for versions without them, a toolport:// URI in a text block."""
    for block in content:
        if block.get("type") == "resource_link":
            return block["uri"]
    for block in content:
        if block.get("type") == "text":
            found = re.search(r"toolport://workspace/[^\s\"')\]]+", block["text"])
            if found:
                return found.group(0)
    return None


def magic_of(blob: str | None) -> str | None:
    return None if blob is None else base64.b64decode(blob)[:5].decode("latin-1")


def distinct(statuses: list[str]) -> list[str]:
    return [status for index, status in enumerate(statuses) if index == 0 or statuses[index - 1] != status]


async def long_as_task(session: ClientSession, dispatcher: JSONRPCDispatcher) -> dict[str, Any]:
    """The 70 s call as an MCP task (2025-11-25).

    mcp 2.3.0 has the task types but no task runtime: ClientSession.send_request checks a tools/call
    answer as a CallToolResult, which a CreateTaskResult is not. So the tools/call with `task` goes
    through the dispatcher the session runs on (the SDK's raw request channel), with the
    MCP-Protocol-Version header the session adds to its own requests; tasks/get and tasks/result go
    through the session.
    """
    params = {"name": "execute_command", "arguments": LONG_ARGUMENTS, "task": {"ttl": 600_000}}
    headers = {MCP_PROTOCOL_VERSION_HEADER: session.protocol_version or ""}
    options: CallOptions = {"timeout": REQUEST_TIMEOUT_SECONDS, "headers": headers}
    raw = await dispatcher.send_raw_request("tools/call", params, options)
    task: types.Task = types.CreateTaskResult.model_validate(raw, by_name=False).task
    statuses = [task.status]
    while task.status not in TERMINAL:
        await anyio.sleep((task.poll_interval or 1000) / 1000)
        get = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id))
        task = await session.send_request(get, types.GetTaskResult, REQUEST_TIMEOUT_SECONDS)
        statuses.append(task.status)
    payload = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task.task_id))
    result = await session.send_request(payload, types.CallToolResult, REQUEST_TIMEOUT_SECONDS)
    return {
        "via": "task",
        "statuses": distinct(statuses),
        "result": {"isError": result.is_error, "structuredContent": result.structured_content},
    }


async def run(url: str, key: str | None) -> dict[str, Any]:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    timeout = httpx2.Timeout(30, read=300)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as (read, write),
    ):
        dispatcher = JSONRPCDispatcher(read, write)
        info = types.Implementation(name="toolport-clients-python", version="1.0.0")
        async with ClientSession(dispatcher=dispatcher, client_info=info) as session:
            return await steps(session, dispatcher)


async def shared_steps(client: Any) -> dict[str, Any]:
    """The steps every Python client takes alike (a ClientSession or the high-level Client): tools/list,
    pdf_generation, resources/read of the link it returned, the context prompt."""
    tools = await client.list_tools()
    pdf = await client.call_tool("pdf_generation", PDF_ARGUMENTS)
    link = link_of(dump(pdf)["content"])
    read_result = await client.read_resource(link) if link else None
    prompt = await client.get_prompt("toolport_context")
    return {
        "tools": [tool.name for tool in tools.tools],
        "pdf": {"isError": pdf.is_error, "link": link},
        "resource": [
            {"uri": content["uri"], "mimeType": content.get("mimeType"), "magic": magic_of(content.get("blob"))}
            for content in (dump(read_result)["contents"] if read_result else [])
        ],
        "prompt": [dump(message) for message in prompt.messages],
    }


async def steps(session: ClientSession, dispatcher: JSONRPCDispatcher) -> dict[str, Any]:
    await session.initialize()
    shared = await shared_steps(session)
    return {"protocolVersion": session.protocol_version, **shared, "long": await long_as_task(session, dispatcher)}


def print_report(run: Any, usage: str | None) -> None:
    """Runs `run(url, key)` with the command line's arguments and prints its report as one JSON line."""
    if len(sys.argv) not in (2, 3):
        sys.exit(usage)
    report = anyio.run(run, sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None)
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    print_report(run, __doc__)
