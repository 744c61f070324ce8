"""Small and slow local model servers: the context read from the server and prompts and max_tokens fitted to it,
a one-line error saying what to change when nothing fits, streamed answers with a long first-token limit for
local servers and a silence limit once tokens flow, and runs that end with their report whatever the model does.
Model critics and designers are told the gait analysis. Servers are `fakeserver.ScriptedChatServer` on
127.0.0.1, speaking like llama.cpp, vLLM or Ollama."""

from __future__ import annotations

import dataclasses
import io
import json
import re

import pytest
from fakeserver import ScriptedChatServer, chat_reply, count_tokens

from rewardloop.cli import main
from rewardloop.control.controllers import make_controller
from rewardloop.control.optimizer import OptimizerConfig, PlannerConfig
from rewardloop.control.policy import shipped_gait
from rewardloop.control.search import pushed_motion
from rewardloop.critic import Critic, CriticConfig, observe
from rewardloop.critic.gait import analyze_gait
from rewardloop.critic.regions import gait_faults
from rewardloop.designer import DesignContext, Designer, DesignerConfig
from rewardloop.loop.commands import _drive
from rewardloop.loop.config import ModelSettings, RunConfig
from rewardloop.loop.records import CandidateStatus, IterationStatus, StopReason
from rewardloop.loop.run import start_run
from rewardloop.models.base import Message, ModelError, Timeouts, context_window, is_local_url
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
    ("plain", {}, None),                                 # says nothing: no fitting
])
def test_the_servers_context_is_read_where_its_kind_reports_it(kind, options, expected):
    with ScriptedChatServer([], kind=kind, **options) as server:
        assert context_window(backend(server)) == expected
        assert server.requests == []  # asking costs no chat call
    with ScriptedChatServer([], kind="plain") as server:
        assert context_window(backend(server, context_tokens=6000)) == 6000  # --context, when the server is silent
    with ScriptedChatServer([], kind="llama.cpp", context=2048) as server:
        assert context_window(backend(server, context_tokens=6000)) == 2048  # the server's word wins


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


def test_a_refusal_over_the_context_is_fitted_again_from_the_servers_own_counts():
    # The server reports no context, counts tokens its own way and refuses 6000 answer tokens the way vLLM
    # does; its message gives the context (4096) and the prompt's length, and the call is fitted to them.
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
    with ScriptedChatServer(lambda request: chat_reply(next(answers)), kind="llama.cpp", context=2800) as server:
        designer = Designer(backend(server))
        assert designer.plan(context, 3).per_call == 1
        proposals = designer.propose(context, 2)
    assert [p.program.term_names for p in proposals] == [("upright",), ("knees",)]
    second = server.requests[1]["messages"][0]["content"]
    assert "Write 1 complete candidate" in second and "Already proposed (write different ones):\n- upright" in second


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


# --- model critics and designers are told the gait analysis -------------------------------------------------

@pytest.fixture(scope="module")
def walking_flat():
    """The humanoid on flat ground at the walking start (the start every locomotion optimizer uses)."""
    return compile_scene(Scene("humanoid", Terrain("flat"), start_speed=WALKING_START_SPEED))


@pytest.fixture(scope="module")
def walk(walking_flat):
    """1.5 s of the shipped humanoid gait from the walking start."""
    policy = shipped_gait("humanoid")
    controller = make_controller(policy.controller, walking_flat)
    with Simulator(walking_flat, nthread=1) as sim:
        return pushed_motion(sim, controller, policy.vector(controller), duration_s=1.5, pushes=())


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
    assert captions == [f"t = {t:.2f} s, side view" for t in (0.0, 0.5, 1.0, 1.5)]


def test_the_designer_is_told_which_gait_faults_fired_where_and_when(walking_flat, walk):
    faults = gait_faults(analyze_gait(observe(walking_flat, walk).features))
    context = DesignContext("walk forward", canonical("walk"), None, scene=walking_flat, gait=faults)
    from rewardloop.prompts.design import compact_prompt, full_prompt

    for prompt in (full_prompt(context, 2), compact_prompt(context, 2)):
        for line in faults.lines():
            assert line in prompt
    assert faults.shapes.startswith("joint curves vs human walking") and " r = " in faults.shapes
    assert faults.findings  # the walk below shows faults (e.g. shuffling), so the loops above check something
    for finding in faults.findings:
        assert finding.region in ("hips", "knees", "ankles", "trunk and pelvis", "feet and stepping", "arms",
                                  "whole body")
