"""The planner: edit the selected engine's settings; every keystroke re-solves both ledgers.

"Before" is always the engine's live settings and model on its GPUs as measured now (for
SGLang, the free memory a restart would find: a co-tenant's bytes count); "after" is the edit
on the same GPUs. The fields start from the live settings, from a finding's fix
(`PlanBasis.start_settings`), or from the edits left when the planner last closed on this
engine (`PlannerDraft`), so nothing typed is lost by going back. An invalid edit shows its
reason inline and keeps the text. `ctrl+r` resets to live; `c` copies the engine flags and `P` probes the edit's KV
pool, from a number field (TP has the focus on opening) as from a dropdown.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Input, Label, Select, Static

from kvtop.domain.calibration.node import NodeMeasure
from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.engines.registry import display_name
from kvtop.domain.engines.registry import engine_flags as flags_of_engine
from kvtop.domain.errors import KvtopError
from kvtop.domain.host_tier_fit import HostTierFit
from kvtop.domain.launch import LaunchSettings, release_names
from kvtop.domain.launch_check import architecture_check, launch_refusals
from kvtop.domain.launch_model import launch_override
from kvtop.domain.model import ModelSpec
from kvtop.domain.ports import ModelLoader
from kvtop.domain.refusals import Refusal
from kvtop.domain.wording import flags_said
from kvtop.ui.plan_errors import model_load_error
from kvtop.ui.plan_fields import CACHE_STATES, DEPLOYMENT_KEYS, FIELD_BY_KEY, FIELDS, FieldKind, pick_hint
from kvtop.ui.plan_nodes import copied_lines, copied_words, node_shortfall
from kvtop.ui.planning import (
    PlanOutcome,
    compile_cache_unread,
    decided_spec_method,
    desktop_fact_note,
    edited_host_fit,
    edited_kv_dtype_options,
    engine_flag_list,
    field_texts,
    kv_dtype_options,
    launch_beside,
    memory_fraction_field,
    plan,
)
from kvtop.ui.screens.base import NodeScreen
from kvtop.ui.screens.planner_basis import PlanBasis, PlannerDraft
from kvtop.ui.screens.planner_lines import measured_note
from kvtop.ui.screens.planner_status import EditProblems, flags_line, plan_status
from kvtop.ui.state import NodeState
from kvtop.ui.widgets.footer import Footer
from kvtop.ui.widgets.model_notes import model_notes_text
from kvtop.ui.widgets.node_header import NodeHeader
from kvtop.ui.widgets.plan_result import NO_REQUESTS_HINT, outcome_table, requests_run
from kvtop.ui.widgets.typed_input import TypedInput
from kvtop.units import fmt_gib

#: The keys a number field leaves to their bindings (no number holds them): `P` probes the planned pool and `c` copies
#: the flags from TP (focused on opening, its text selected: typed, `c` would replace the TP), not only from a dropdown.
#: A word field (model, engine version, speculative) types them.
NUMBER_FIELD_KEYS = frozenset({"P", "c"})
#: Copy the flags from any widget, a word field included: a control key no `Input` binds or types (Textual 8's binds
#: ctrl+a/e/d/w/u/k/x/c/v), so it is never text.
COPY_ANYWHERE = "ctrl+y"


class PlannerScreen(NodeScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("ctrl+r", "reset", "Reset to launch", priority=True),
        Binding("c", "copy_flags", "Copy flags"),  # from a list, a switch, a button, a number field: a word field types it
        Binding(COPY_ANYWHERE, "copy_flags", "Copy flags", show=False, priority=True),  # the help lists it
        Binding("pageup", "scroll_result('up')", "Scroll the result", show=False),
        Binding("pagedown", "scroll_result('down')", "Scroll the result", show=False),
    ]

    class ModelLoaded(Message):
        def __init__(self, ref: str, model: ModelSpec | None, error: str | None,
                     override: ConfigOverride | None = None) -> None:  # fmt: skip
            super().__init__()
            self.ref, self.model, self.error, self.override = ref, model, error, override

    def __init__(
        self,
        basis: PlanBasis,
        loader: ModelLoader,
        state: NodeState,
        now: float,
        interval_s: float,
        *,
        draft: PlannerDraft | None = None,
        keep_draft: Callable[[PlannerDraft | None], None] | None = None,
        node_measures: tuple[NodeMeasure, ...] = (),
    ) -> None:
        super().__init__(state, now, interval_s)
        self.basis = basis
        self._node_measures = node_measures  # this node's earlier starts (the local calibration store)
        self._loader = loader
        self._keep_draft = keep_draft
        self._live_model: ModelSpec | None = basis.model or (draft.live_model if draft else None)
        self._model: ModelSpec | None = draft.model if draft else basis.model
        self._model_ref = draft.model_ref if draft else basis.settings.model or ""
        self._model_error: str | None = None
        # the config override the model was loaded with, and the one last asked of the loader (the launch's, read
        # from its flags at each solve: `launch_model.launch_override`); the basis's model is the live ledger's, loaded
        # with the live launch's override (`predictor.EnginePredictor`), a draft's with one this screen does not keep
        self._model_override: ConfigOverride | None = (
            launch_override(basis.settings) if basis.model is not None and draft is None else None
        )
        self._override_asked: ConfigOverride | None = None
        self._edit_base = (  # what the fields' edits replace values of
            draft.edit_base if draft else basis.start_settings or basis.settings
        )
        self._start_texts = draft.texts if draft else field_texts(self._edit_base, basis.measured)
        # the blank fields' hints of the last launch that solved, kept across a close (`PlannerDraft.hints`)
        self._hints: dict[str, str] = dict(draft.hints) if draft else {}
        # the speculative text the engine's rule decided, while the field shows it (None: the operator typed one)
        self._spec_decided: str | None = self._start_texts["spec_method"] if not draft or draft.spec_follows else None
        self.outcome: PlanOutcome | None = None
        # the KV dtype list, in the words of the release the edit starts at (`_show_kv_words` follows edits)
        self._kv_options = kv_dtype_options(basis.settings.engine, self._edit_base.engine_version)

    def compose(self) -> ComposeResult:
        texts = self._start_texts
        yield NodeHeader(self.interval_s, engines=False, id="header").data_bind(
            state=NodeScreen.node, now=NodeScreen.now
        )
        basis = self.basis
        yield Static(self._title(), id="planner-title")
        with Horizontal(classes="plan-field", id="plan-model-row"):  # the whole width: a hub id is long
            yield Label(FIELD_BY_KEY["model"].label, classes="plan-label")
            yield TypedInput(texts["model"], compact=True, elide=True, id="plan-model")
        yield Static(id="plan-model-notes")  # how the planned model's config was read (shown where it has notes)
        with Horizontal(id="planner-body"):
            # no tab stop of its own: shift+tab from TP reaches the model field, never a container where a typed
            # name's letters would run the screen's keys (q quits, z pauses, c copies)
            with VerticalScroll(id="plan-form", can_focus=False):
                for field in FIELDS:
                    if field.key == "model":
                        continue
                    with Horizontal(classes="plan-field"):
                        yield Label(field.label, classes="plan-label")
                        if field.kind is FieldKind.SWITCH:
                            yield Select(
                                [("on", "on"), ("off", "off")],
                                value=texts[field.key],
                                allow_blank=False,
                                compact=True,
                                id=f"plan-{field.key}",
                                # an engine without DP attention (vLLM) spreads attention over DP alone
                                disabled=field.key == "enable_dp_attention"
                                and "enable_dp_attention" not in flags_of_engine(basis.settings.engine).spellings.values(),
                            )
                        elif field.kind in (FieldKind.DTYPE, FieldKind.CACHE):
                            # a compile cache the engine's rule does not read (SGLang's pool is sized before
                            # anything compiles): off, reading 'not read' (a disabled field takes no focus, so a
                            # keyboard never reaches its tooltip), its why the tooltip, as `plan --compile-cache` notes it
                            unread = compile_cache_unread(basis.settings, basis.version) if field.kind is FieldKind.CACHE else None
                            cache = [(s if unread is None else "not read", s) for s in CACHE_STATES]
                            yield Select(
                                self._kv_options if field.kind is FieldKind.DTYPE else cache,
                                value=texts[field.key],
                                allow_blank=False,
                                compact=True,
                                id=f"plan-{field.key}",
                                disabled=unread is not None,
                                tooltip=unread,
                            )
                        else:
                            placeholder = self._hints.get(field.key, "engine default" if field.kind.may_be_blank else "")
                            if field.key in DEPLOYMENT_KEYS:  # a deployment feature: blank turns it off
                                placeholder = "off"
                            yield TypedInput(
                                texts[field.key],
                                placeholder=placeholder,
                                compact=True,
                                id=f"plan-{field.key}",
                                passed_keys=NUMBER_FIELD_KEYS if field.kind.is_number else frozenset(),
                            )
            # its own scroll, no tab stop: on a short terminal the per-rank rows scroll into view, never cut off
            with VerticalScroll(id="plan-result-box", can_focus=False):
                yield Static(id="plan-result")
        yield Static(id="plan-error")
        with Horizontal(id="plan-flags-row"):
            yield Static(id="plan-flags")
            yield Button("Copy (c)", id="plan-copy", compact=True)
            yield Button("Reset (^r)", id="plan-reset", compact=True)
        yield Footer()

    @property
    def form_present(self) -> bool:
        """Whether the form's widgets are in the DOM: a planner closed before it mounted (Escape under
        load) has none, and its late mount, edits or model load must not look for them."""
        wanted = ("#plan-error", "#plan-result", "#plan-flags", *(f"#plan-{field.key}" for field in FIELDS))
        return all(self.query(selector) for selector in wanted)

    def on_mount(self) -> None:
        super().on_mount()
        if not self.form_present:
            return
        live, start = field_texts(self.basis.settings, self.basis.measured), self._start_texts
        changed = next((field.key for field in FIELDS if live[field.key] != start[field.key]), "tp")
        self.query_one(f"#plan-{changed}").focus()  # a fix's (or the last edit's) changed field, else TP
        if self._model is None and self._model_ref:
            self._load(self._model_ref)
        self.recompute()

    def field_values(self) -> dict[str, str]:
        values: dict[str, str] = {}
        for field in FIELDS:
            widget = self.query_one(f"#plan-{field.key}")
            if isinstance(widget, Select):
                values[field.key] = str(widget.value)
            elif isinstance(widget, Input):
                values[field.key] = widget.value
        return values

    def recompute(self) -> None:
        """Solve before and after for the current texts; show the result or the reason it fails."""
        if not self.form_present:
            return
        error = self.query_one("#plan-error", Static)
        result = self.query_one("#plan-result", Static)
        flags = self.query_one("#plan-flags", Static)
        if self._model is None:
            message = self._model_error or f"loading model {self._model_ref!r}…"
            error.update(Content.styled(message, "bold $error" if self._model_error else "$warning"))
            return
        values = self.field_values()
        basis = self.basis
        # the field the rule fills is no edit: the launch keeps its own speculative flags (the engine decides)
        planned = {key: text for key, text in values.items() if key != "spec_method" or self._spec_decided is None}
        self.outcome = plan(
            self._live_model,
            basis.settings,
            {**planned, "model": self._model_ref},  # a model is planned with once it has loaded
            gpu_total_bytes=basis.gpu_total_bytes,
            gpu_name=basis.gpu_name,
            base=self._edit_base,
            measured=basis.measured,
            after_model=self._model,
            draft=basis.draft,
            node_measures=self._node_measures,
            version=basis.version,
            node_gpus=basis.node_gpus,
        )
        self._follow_override(self.outcome.settings)
        self._show_defaults(self.outcome)
        self._keep(values)  # with the hints just shown
        self._show_spec_decided(self.outcome)
        self._show_kv_words(self.outcome.settings, values["engine_version"])
        self._show_model_notes()
        self.query_one("#planner-title", Static).update(self._title())
        host = self.host_fit()
        refused = self.refusals()
        result.update(outcome_table(self.outcome, basis.live, host, basis.live_source, refused=bool(refused)))
        typed_model = values["model"].strip()
        problems = EditProblems(refused=refused, too_large=self.too_large(), host=host,
                                pending_model=typed_model if typed_model != self._model_ref else None,
                                model_error=self._model_error)  # fmt: skip
        status = plan_status(self.outcome, problems, self._model_ref)
        error.update(Content.styled(status.text, status.style))
        for field in FIELDS:
            self.query_one(f"#plan-{field.key}").set_class(field.key in status.marked, "-invalid")
        flags.update(flags_line(self.outcome, problems, basis.settings))

    def _show_model_notes(self) -> None:
        """The planned (after) model's reading notes under the model field, and for a model the live engine does
        not run, whether its release registers the class (as `plan` says it); what it leaves out is the table's
        (`Ledger.not_modelled`), said here only where no plan solved; hidden where it has none."""
        notes = self.query_one("#plan-model-notes", Static)
        planned = self.outcome.after if self.outcome is not None else None
        after = planned if self.outcome is not None and not self.outcome.live_model_planned else None
        check = architecture_check(after) if after is not None else None
        notes.update(text := model_notes_text(self._model, check, planned=planned is not None))
        notes.display = bool(text.plain)

    def too_large(self) -> str | None:
        """'needs 16 GPUs, the node has 8' when the edited layout cannot run on its nodes, each of this node's GPUs
        (None: it can; a layout over `--nnodes` nodes needs its share of each)."""
        after = self.outcome.after if self.outcome else None
        return node_shortfall(after.settings, after.layout, self.basis.node_gpus) if after is not None else None

    def host_fit(self) -> HostTierFit | None:
        """The edited launch's host KV tier against this node's host memory (None: no tier asked for)."""
        basis = self.basis
        return edited_host_fit(self.outcome, basis.host_memory, basis.node_gpus, basis.host_origin)

    def refusals(self) -> tuple[Refusal, ...]:
        """What the engine refuses at start in the edited launch and not in the live one (a live engine that
        runs such a launch was told to accept it, e.g. with the long-context override)."""
        outcome = self.outcome
        if outcome is None or outcome.after is None:
            return ()
        live = launch_refusals(outcome.before) if outcome.before is not None else ()
        return tuple(refusal for refusal in launch_refusals(outcome.after) if refusal not in live)

    def _title(self) -> Content:
        """'Planner · sglang pid 4242 · H100 79.65 GiB · rules of SGLang 0.5.9 (…) · free before load …': the
        release whose rules solve both sides and the exact free memory they start from (what `kvtop plan`
        needs, as --engine-version and --free-memory, to agree to the token)."""
        basis = self.basis
        solved = self.outcome.before or self.outcome.after if self.outcome else None
        rules = (
            f" · rules of {display_name(basis.settings.engine)} {solved.version.label} ({solved.version.detail})"
            if solved is not None else ""
        )  # fmt: skip
        return Content.assemble(
            ("Planner", "bold $primary"), f" · {basis.engine_label} · {basis.gpu_name or 'GPU'} {fmt_gib(basis.gpu_total_bytes)}",
            (f" · after starts from the {basis.start_label}" if basis.start_label else "", "$accent"),
            (rules, "$text-muted"), (measured_note(basis.measured, self.outcome), "$text-muted"),
            (desktop_fact_note(basis.measured), "$text-muted"),
        )  # fmt: skip

    def _keep(self, values: dict[str, str]) -> None:
        """Hand the edits to the app (none when they equal the live settings), for the next opening."""
        if self._keep_draft is None:
            return
        unchanged = (
            self._edit_base == self.basis.settings
            and values == field_texts(self.basis.settings, self.basis.measured)
            and self._model is self._live_model
        )
        self._keep_draft(
            None if unchanged else PlannerDraft(dict(values), self._edit_base, self._model, self._model_ref, self._live_model,
                                                spec_follows=self._spec_decided is not None, hints=tuple(self._hints.items()))
        )  # fmt: skip

    def _show_defaults(self, outcome: PlanOutcome) -> None:
        """Blank fields show the value the engine would pick for the launch planned, e.g. 'auto: 0.818': read from
        the after column (its model and layout: a loaded Gemma-3n's 32768 positions and vision-reduced share, not
        the live Llama's 8192 and 0.818). An edit that does not solve (a field left invalid while typing) keeps the
        hints of the last launch that did: the trial saw 'auto: 8192' turn to 'engine default' at every stray
        keystroke, and so does the planner opened again on such an edit (`PlannerDraft.hints`). Before any solve the fields
        say 'engine default'."""
        after = outcome.after
        if after is None:
            return
        shares = memory_fraction_field(after.settings) is not None  # llama.cpp's 1.0 is a placeholder
        requests = requests_run(after)  # the result table's 'max running reqs' reads the same
        picks = {  # the engine's pick in each blank field: 'auto: …' where 'auto' typed reads as it (`offers_auto`)
            "memory_fraction": f"{after.engine.memory_fraction:.3f}" if shares else None,
            "page_size": str(after.engine.page_size), "context_length": str(after.context_length),
            # a launch that does not fit runs none: named, never 'auto: 0' (SGLang's figure follows its empty pool)
            "max_running_requests": str(NO_REQUESTS_HINT if requests is None else requests),
        }  # fmt: skip
        engine, version = after.settings.engine, after.settings.engine_version
        defaults = {key: pick_hint(engine, key, version, pick) for key, pick in picks.items()}
        # blank: the latest release's rules (`--engine-version` unset), as the engine names one ('latest build')
        defaults["engine_version"] = f"latest {release_names(engine).noun}"
        self._hints = defaults
        for key, value in defaults.items():
            self.query_one(f"#plan-{key}", Input).placeholder = value

    def _show_spec_decided(self, outcome: PlanOutcome) -> None:
        """The speculative field, while the rule fills it, shows the method the engine decides for the edit (vLLM
        detects it from the draft's name and config class by release: a MuseGlimmerAssistantModel draft runs dflash
        at v0.28.0, draft_model at v0.27.1), never a method one release decided written into another's launch."""
        settings = outcome.after.settings if outcome.after is not None else outcome.settings
        if self._spec_decided is None or settings is None:
            return
        decided = decided_spec_method(settings)
        field = self.query_one("#plan-spec_method", Input)
        if field.value != decided:
            with field.prevent(Input.Changed):
                field.value = decided
        self._spec_decided = decided

    def _show_kv_words(self, settings: LaunchSettings | None, version_text: str) -> None:
        """The KV dtype list in the words of the release the edit names (`edited_kv_dtype_options`); the value
        chosen stays."""
        options = edited_kv_dtype_options(self.basis.settings.engine, settings, version_text)
        if options is None or options == self._kv_options:
            return
        self._kv_options = options
        select = self.query_one("#plan-kv_cache_dtype", Select)
        chosen = select.value
        with select.prevent(Select.Changed):
            select.set_options(options)
            select.value = chosen

    @property
    def flags_text(self) -> str | None:
        """The flags `c` copies, over nodes one line per node (`plan_nodes.copied_lines`); None when the edit is
        invalid or the layout needs more GPUs than its nodes have."""
        if self.outcome is None or self.outcome.settings is None or self.too_large() is not None or self.refusals():
            return None
        settings, nodes = self.outcome.settings, self.outcome.nodes
        shared = engine_flag_list(settings, with_model=settings.model != self.basis.settings.model, launch=nodes)
        return copied_lines(shared, nodes)

    @on(Input.Changed)
    @on(Select.Changed)
    def edited(self, event: Input.Changed | Select.Changed) -> None:
        if isinstance(event, Input.Changed) and event.input.id == "plan-spec_method" and event.value != self._spec_decided:
            self._spec_decided = None  # typed: the method is the operator's from now on
        self.recompute()

    @on(Input.Submitted, "#plan-model")
    def load_edited_model(self, event: Input.Submitted) -> None:
        ref = event.value.strip()
        if ref and ref != self._model_ref:
            self._model_error = None
            self.query_one("#plan-error", Static).update(
                Content.styled(f"loading model {ref!r}…", "$warning")
            )
            self._load(ref)

    def _follow_override(self, settings: LaunchSettings | None) -> None:
        """Reload the model where the launch's config override (live or edited flags) is not the one it holds; an
        edit that does not solve (`settings` None) keeps the model as it is, not reloaded without its override."""
        if settings is None:
            return
        wanted = launch_override(settings)
        if wanted != self._model_override and wanted != self._override_asked and self._model_ref:
            self._load(self._model_ref)

    def _load(self, ref: str) -> None:
        """Load `ref` with the launch's config override (the solved edit's flags, else the edit base's)."""
        self._override_asked = launch_override(self.outcome.settings if self.outcome else self._edit_base)
        self._load_model(ref, self._override_asked)

    @work(thread=True, exclusive=True, group="planner-model", exit_on_error=False)
    def _load_model(self, ref: str, override: ConfigOverride | None) -> None:
        """The loader may read files or the hub: never on the event loop. The launch's config override is merged in
        by the loader (its `override`)."""
        try:
            self.post_message(self.ModelLoaded(ref, self._loader(ref, override=override), None, override))
        except (KvtopError, OSError) as err:
            self.post_message(self.ModelLoaded(ref, None, model_load_error(ref, err), override))

    @on(ModelLoaded)
    def model_loaded(self, message: ModelLoaded) -> None:
        if message.model is not None:
            self._model, self._model_ref, self._model_error = message.model, message.ref, None
            self._model_override = message.override
            live_ref = message.ref == (self.basis.settings.model or "")
            if self._live_model is None and live_ref and message.override == launch_override(self.basis.settings):
                self._live_model = message.model  # the live model, loaded by reference with the live launch's override
        else:
            self._model_error = message.error
        self.recompute()

    def action_scroll_result(self, direction: str) -> None:
        """Page the result pane (no tab stop of its own) while a field keeps the focus."""
        box = self.query_one("#plan-result-box", VerticalScroll)
        box.scroll_page_up(animate=False) if direction == "up" else box.scroll_page_down(animate=False)

    @on(Button.Pressed, "#plan-copy")
    def action_copy_flags(self) -> None:
        text = self.flags_text
        if text is None:
            refused = self.refusals()
            why = self.too_large() or (refused[0].message if refused else "the edit is not valid")
            self.notify(f"nothing to copy: {why}", severity="warning")
            return
        self.app.copy_to_clipboard(text)
        nodes = copied_words(self.outcome.nodes) if self.outcome else ""
        beside = launch_beside(self.outcome.settings) if self.outcome and self.outcome.settings else ""  # the YAML
        self.notify(f"copied{f' {nodes}' if nodes else ''}: {flags_said(text)}" + (f" · {beside}" if beside else ""))

    @on(Button.Pressed, "#plan-reset")
    def action_reset(self) -> None:
        """Every field back to the engine's live settings (and its model)."""
        texts = field_texts(self.basis.settings, self.basis.measured)
        self._edit_base = self.basis.settings
        self._spec_decided = texts["spec_method"]
        if self._live_model is not None:
            self._model, self._model_ref, self._model_error = (
                self._live_model,
                self.basis.settings.model or "",
                None,
            )
            self._model_override = launch_override(self.basis.settings)  # the live model's (see `model_loaded`)
        for field in FIELDS:
            widget = self.query_one(f"#plan-{field.key}")
            with widget.prevent(Input.Changed, Select.Changed):
                if isinstance(widget, (Select, Input)):
                    widget.value = texts[field.key]
        if isinstance(self.focused, Input):  # selected as on focus: the next key replaces the live value
            self.focused.select_all()  # (the trial's ctrl+r then 4 on TP read 84, not 4)
        self.recompute()
