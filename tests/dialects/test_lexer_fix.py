"""The MLIR lexer's string literals: linear on an unterminated quote, same language as xDSL's."""

import re
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.utils.mlir_lexer import MLIRLexer

import xrelay.dialects  # noqa: F401  (installs the pattern)
from xrelay.dialects._lexer_fix import _UPSTREAM, STRING_LITERAL

# Each added character doubled the upstream pattern's time: 40 characters took minutes,
# 5,000 would never end. A hang is what this guards against, so the limit is generous.
TAIL = "a b" * 2000
UNTERMINATED = '"test.op"() {"' + TAIL + '} : () -> tensor<2xf32>, tensor<2xf32>\n'


def test_the_lexer_uses_the_linear_pattern():
    assert MLIRLexer._unescaped_characters_regex is STRING_LITERAL


def _tool(tmp_path, *argv):
    path = tmp_path / "bad.mlir"
    path.write_text(UNTERMINATED)
    code = f"import sys; from xrelay.tools.{argv[0]} import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, str(path), *argv[1:]],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_relay_opt_reports_an_unterminated_string_at_once(tmp_path):
    res = _tool(tmp_path, "relay_opt")
    assert res.returncode == 1
    assert "bad.mlir:1:14" in res.stderr
    assert "End of file reached before closing string literal" in res.stderr
    assert "Traceback" not in res.stderr


def test_relay_run_reports_an_unterminated_string_at_once(tmp_path):
    res = _tool(tmp_path, "relay_run")
    assert res.returncode == 1
    assert "End of file reached before closing string literal" in res.stderr
    assert "Traceback" not in res.stderr


_piece = st.one_of(
    st.text(alphabet=st.characters(blacklist_characters='"\\\n\v\f'), min_size=1, max_size=5),
    st.sampled_from(['\\"', "\\n", "\\t", "\\\\", "\\41", "\\ff", "\\", "\n", '"']),
)


# No deadline: the upstream pattern it is compared with backtracks, slowly on a loaded machine.
@settings(deadline=None)
@given(st.lists(_piece, max_size=8))
def test_same_matches_as_xdsls_pattern(pieces):
    text = '"' + "".join(pieces) + '"'
    upstream = re.compile(_UPSTREAM).match(text)
    ours = STRING_LITERAL.match(text)
    assert (upstream and upstream.span()) == (ours and ours.span())
