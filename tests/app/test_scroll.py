"""The scroll-into-view script: its values stay data, whatever they contain."""

from __future__ import annotations

import json

import pytest

from podium.app.scroll import scroll_script


def test_values_are_json_and_cannot_close_the_script() -> None:
    script = scroll_script(token="t1", button="</script><b>Yes</b>")
    assert "</script><b>" not in script
    want = json.loads(script.split("const want = ")[1].split(";\n")[0])
    assert want == {"token": "t1", "selector": None, "button": "</script><b>Yes</b>"}


def test_one_target_only() -> None:
    with pytest.raises(ValueError):
        scroll_script(token="t", selector="mark", button="Yes")
