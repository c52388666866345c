"""The steps of django-mcpz's server that yorik.mcp.SkillServer replaces.

The library offers no public hook to refuse a tool outside the caller's tier
as forbidden (its permission hides the tool as unknown) or to return a card's
resource_link beside structured content, so SkillServer overrides three of
its internal methods and reads its tool table. An upgrade that renames or
reshapes any of them must fail here, not quietly serve the library's own
steps.
"""

import inspect

from django_mcpz.server import MCPServer, Tool

from yorik.mcp import build_server
from yorik.registry import all_skills


def parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_the_replaced_steps_keep_their_names_and_parameters():
    assert parameters(MCPServer._tools_list) == [
        "self",
        "request",
        "request_id",
        "params",
    ]
    assert parameters(MCPServer._run_tool) == [
        "self",
        "request",
        "request_id",
        "tool",
        "arguments",
        "elicitation",
    ]
    assert parameters(MCPServer._result) == [
        "self",
        "request",
        "request_id",
        "result",
        "result_type",
    ]


def test_the_tool_table_holds_each_skill_with_its_definition():
    server = build_server(all_skills())
    assert set(server._tools) == {found.name for found in all_skills()}
    for name, tool in server._tools.items():
        assert isinstance(tool, Tool)
        assert tool.definition["name"] == name
