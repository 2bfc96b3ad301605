"""The controls: every control the dashboard has, declared once with a
:class:`~distsgd.params.Domain` taken from the library (narrowed by a cost cap for the shared
host), and how a raw URL value becomes a control's value (:meth:`Control.parse`: junk replaced
by the default, an out-of-range value clamped, each with a notice).

The delay families' controls and the delay, scheme and Stragglers choices are derived from the
library's registries (:func:`refresh`); nothing here names a family or a scheme.  Labels, help
texts and option words are English message ids (``N_``), shown through ``tr`` where they are
drawn (:mod:`distsgd.ui.sidebar`); keys and URL values stay English.  Where a control's value
lives (the session store, the URL) is :mod:`distsgd.ui.state`.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import delays as _delays
from .. import error as sgd
from ..clusters import PERSISTENCE, SLOW, SLOW_FRACTION, SLOWDOWN, STRAGGLER_KINDS, Cluster
from ..clusters import TRACE_MODES as _TRACE_MODES
from ..delays import SHIFT, Delay, Empirical
from ..examples import EXAMPLES
from ..params import Domain, ParameterError, shortest
from ..problems import BUILTIN_SETS, LAM, TARGET_ACCURACY
from ..random import SEED
from ..schedules import PERIOD
from ..schemes import COMM_DELAY, H_DOMAIN, K_DOMAIN, SCHEMES, M
from ..traces import THRESHOLD
from . import i18n
from .i18n import LANGUAGES, N_, phrase, tr
from .plain_text import quote
from .rerun_caps import RANGES, UI_BUDGETS, UI_DEFAULT_BUDGET

#: the graphs the sidebar offers the decentralised schemes (spec strings of DESIGN §12, built on m nodes)
GRAPHS = ("ring", "torus", "hypercube", "exponential", "random-regular(d=4)", "complete", "star")

#: the lessons (DESIGN §14; their steps are distsgd.ui.lesson_steps): "none" is no lesson running;
#: a lesson has at most LESSON_STEPS_MAX steps, each answered by one of four choices (a–d)
LESSONS = ("none", "seeds")
LESSON_STEPS_MAX = 12
LESSON_STEPS = tuple(str(n) for n in range(1, LESSON_STEPS_MAX + 1))
LESSON_ANSWERS = tuple(f"{n}{c}" for n in LESSON_STEPS for c in "abcd")

#: the problem choice of a user's data file: read from an upload (a URL never names a file)
UPLOAD_PROBLEM = "logreg:upload"
#: the problem choices of the Error and Trade-offs pages (DESIGN §9): the quadratic, the bundled
#: data sets and an uploaded file
REAL_PROBLEMS = ("quadratic", *(f"logreg:{name}" for name in BUILTIN_SETS), UPLOAD_PROBLEM)

__all__ = ["Control", "CONTROLS", "Family", "FAMILIES", "FAMILY_PARAMS", "FAMILY_LABELS", "KIND_PARAMS", "refresh",
           "registry_messages", "CHOICE_LABELS", "SHIFT_KEY", "TRACE_OPTION", "UPLOAD_PROBLEM", "REAL_PROBLEMS",
           "describe", "explain", "label_of",
           "url_text", "LESSONS", "LESSON_STEPS_MAX", "LESSON_STEPS", "LESSON_ANSWERS"]


def _narrow(dom: Domain, low: float | None = None, high: float | None = None) -> Domain:
    """The library's domain, narrowed to what one request on a shared host may ask for."""
    lo = dom.low if low is None else max(dom.low, low)
    hi = dom.high if high is None else min(dom.high, high)
    return dataclasses.replace(dom, low=lo, high=hi, low_open=dom.low_open and lo == dom.low,
                               high_open=dom.high_open and hi == dom.high)


def describe(dom: Domain) -> str:
    """:meth:`Domain.describe` in the current language ("an integer in [1, 1000]"), from the
    domain's :meth:`~distsgd.params.Domain.phrase` (its reason code and numbers)."""
    return str(phrase(dom.phrase()))


def explain(exc: Exception) -> str:
    """A library error in the current language: a :class:`~distsgd.params.ParameterError` from its
    reason code and fields (:func:`distsgd.ui.i18n.phrase`; e.g. "m: must be an integer in
    [1, 1000] (got 0)"), in another language than English its parameter named by its control's
    label (:func:`label_of`); any other exception as its text."""
    if isinstance(exc, ParameterError):
        return str(phrase(exc, parameter=None if i18n.language() == "en" else label_of(exc.parameter)))
    return str(exc)


def label_of(parameter: str) -> str | None:
    """The label (translated) of the control a library parameter is, when exactly one control has
    that key or, failing that, that domain name (``time`` is the horizon T); else None."""
    mine = [c for c in CONTROLS.values() if c.key == parameter] or \
        [c for c in CONTROLS.values() if c.domain is not None and c.domain.name == parameter]
    return tr(mine[0].label) if len(mine) == 1 else None


def url_text(v: Any) -> str:
    """A control's value as the URL and the notices write it (a float in its shortest form)."""
    return shortest(v) if isinstance(v, float) else str(v)


@dataclass(frozen=True)
class Control:
    """One control: its key (in the URL too), its label and help (English message ids), its
    default, and either a domain (a number, moved by ``step``) or its options (a choice; ``multi``:
    several at once)."""

    key: str
    label: str
    default: Any
    domain: Domain | None = None
    options: tuple[str, ...] | None = None
    multi: bool = False
    step: float | None = None
    help: str = ""

    def initial(self) -> Any:
        return list(self.default) if self.multi else self.default

    def parse(self, raw: Any) -> tuple[Any, str | None]:
        """(value, notice) for a raw URL value (a string, or a list when the key repeats);
        the notice says what was clamped, replaced or ignored."""
        values = [str(v) for v in (raw if isinstance(raw, list) else [raw])]
        if self.options is not None and self.multi:
            good = list(dict.fromkeys(v for v in values if v in self.options))
            bad = list(dict.fromkeys(v for v in values if v not in self.options))
            note = None
            if bad:
                shown = ", ".join(quote(b) for b in bad[:3])
                note = (tr("{key}: ignored unknown value(s) {values} and {more} more", key=self.key, values=shown,
                           more=len(bad) - 3) if len(bad) > 3
                        else tr("{key}: ignored unknown value(s) {values}", key=self.key, values=shown))
            elif len(good) < len(values):
                note = tr("{key}: ignored repeated values", key=self.key)
            return (good or self.initial()), note
        note_repeat = (tr("{key} was given {count} times; using the last valid value", key=self.key,
                          count=len(values)) if len(values) > 1 else None)
        for raw_one in reversed(values):
            v, note = self._parse_one(raw_one)
            if note is None or raw_one == values[0]:
                return v, (note or note_repeat)
        return self.initial(), note_repeat  # pragma: no cover - the loop always returns

    def _parse_one(self, raw: str) -> tuple[Any, str | None]:
        if self.options is not None:
            if raw in self.options:
                return raw, None
            return self.default, tr("{key}: {value} is not one of {options}; using {default}", key=self.key,
                                    value=quote(raw), options=", ".join(self.options), default=self.default)
        assert self.domain is not None
        try:
            return self.domain.check(raw.strip(), self.key), None
        except ParameterError:
            try:
                x = float(raw.strip())
            except ValueError:
                x = math.nan
            if not math.isfinite(x):
                return self.default, tr("{key}: {value} is not a number; using the default {default}", key=self.key,
                                        value=quote(raw), default=self.default)
            v = self.domain.clamp(round(x) if self.domain.integer else x)
            v = int(v) if self.domain.integer else float(v)
            return v, tr("{key}: must be {range} (got {value}) — clamped to {clamped}", key=self.key,
                         range=describe(self.domain), value=quote(raw, 24), clamped=url_text(v))


def _num(key: str, label: str, default: float, dom: Domain, step: float | None = None, help: str = "") -> Control:
    return Control(key, label, default, domain=dom, step=step, help=help)


# -- the choices the registries make: delay families, schemes, cluster kinds ------------------
#
# Nothing here names a family or a scheme: the delay choices and each family's parameter
# controls come from distsgd.delays.FAMILIES (each class declares its label, TITLES, and how its
# parameters are shown, VIEWS), the scheme choices from distsgd.schemes.SCHEMES (in its order),
# the Stragglers choices from the library's cluster kinds.  rerun_caps.RANGES narrows a
# parameter's declared domain where it names the control's key; a family it does not name gets
# its whole domain.  :func:`refresh` derives them again when a registry changes (a test registers
# a family or a scheme after import; a server's registries never change once it runs).

#: the control of the shift Δ, which every family but the plain exponential shows last
SHIFT_KEY = "delta"
#: the choice (and URL value) of a measured trace: read from an upload (a URL never names a file)
TRACE_OPTION = "trace"
_SHIFT_CONTROL = _num(SHIFT_KEY, N_("shift Δ"), 0.0, _narrow(SHIFT, *RANGES[SHIFT_KEY]), 0.01,
                      N_("constant part of every delay"))


@dataclass(frozen=True)
class Family:
    """One choice of "Delay distribution": a registered family under one spec name (DESIGN §2).

    ``label`` is an English message id (the class's ``TITLES``; shown through ``tr``, in English
    until the catalogue has it); ``fields`` maps each of its controls, in the order they are
    drawn, to the class's field it sets (the shift's ``delta`` → ``shift``)."""

    option: str
    cls: type[Delay]
    label: str
    fields: dict[str, str]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.fields)

    @property
    def uploaded(self) -> bool:
        """A measured trace: its law comes from an uploaded file, not from controls."""
        return issubclass(self.cls, Empirical)

    def build(self, values: Callable[[str], Any]) -> Delay:
        """The law X of the controls' values (``values(key)``); a ParameterError when they do not
        fit together (e.g. a uniform's b ≤ a)."""
        return self.cls(**{f: values(k) for k, f in self.fields.items()})


def _families() -> tuple[dict[str, Family], list[Control]]:
    """The delay choices (option → :class:`Family`, in registry order) and their parameter
    controls: one per parameter (:meth:`~distsgd.delays.Delay.views`: key, label, default, step,
    help), its range the parameter's domain narrowed by ``RANGES[key]`` when that exists, then the
    shift Δ unless the spec name is one of the class's ``UNSHIFTED``.  Two parameters claiming one
    key is a programming error (ValueError)."""
    families: dict[str, Family] = {}
    controls: dict[str, Control] = {}
    owner: dict[str, tuple[type[Delay], str]] = {}
    for spec, cls in _delays.FAMILIES.items():
        option = TRACE_OPTION if issubclass(cls, Empirical) else spec
        fields: dict[str, str] = {}
        for dom, view in zip(cls.PARAMS, cls.views(), strict=True):
            first = owner.setdefault(view.key, (cls, dom.name))
            if first != (cls, dom.name) or view.key == SHIFT_KEY:
                raise ValueError(f"{cls.__name__}.{dom.name}: the control key {view.key!r} is taken "
                                 f"({first[0].__name__}.{first[1]})")
            dom_ui = _narrow(dom, *RANGES.get(view.key, (None, None)))
            controls.setdefault(view.key, Control(view.key, view.label, dom_ui.clamp(view.default), domain=dom_ui,
                                                  step=view.step, help=view.help))
            fields[view.key] = cls.FIELDS.get(dom.name, dom.name)
        if spec not in cls.UNSHIFTED:
            controls.setdefault(SHIFT_KEY, _SHIFT_CONTROL)
            fields[SHIFT_KEY] = "shift"
        families[option] = Family(option, cls, cls.TITLES.get(spec, spec), fields)
    return families, list(controls.values())


def _cluster_classes() -> dict[str, Any]:
    """The library's cluster classes (dataclasses) by their ``kind``: every subclass of Cluster
    that names one."""
    out: dict[str, Any] = {}
    todo: list[type] = [Cluster]
    while todo:
        c = todo.pop(0)
        todo += c.__subclasses__()
        kind = vars(c).get("kind")
        if isinstance(kind, str):
            out.setdefault(kind, c)
    return out


def _kind_params(controls: dict[str, Control]) -> dict[str, tuple[str, ...]]:
    """The controls of each Stragglers choice (:data:`distsgd.clusters.STRAGGLER_KINDS`): the
    fields of the library's cluster class of that kind that a control sets — a number control
    named as the field, or the control ``<kind>_<field>`` (a trace's ``mode`` is ``trace_mode``);
    none for ``none`` (i.i.d. workers: no class of that kind)."""
    def control(kind: str, field: str) -> str | None:
        if field in controls and controls[field].domain is not None:
            return field
        return f"{kind}_{field}" if f"{kind}_{field}" in controls else None

    classes = _cluster_classes()
    out: dict[str, tuple[str, ...]] = {}
    for kind in STRAGGLER_KINDS:
        keys = [control(kind, f.name) for f in dataclasses.fields(classes[kind])] if kind in classes else []
        out[kind] = tuple(k for k in keys if k is not None)
    return out


def _controls(families: dict[str, Family], family_controls: list[Control]) -> dict[str, Control]:
    """Every control, in the order the URL is read: the delay choice and its families' controls
    (:func:`_families`), then the others; the scheme choices are the registry's names."""
    schemes = tuple(SCHEMES)
    controls = [
        Control("delay", N_("Delay distribution"), "shifted-exp", options=tuple(families),
                help=N_("The random time X a worker needs for one mini-batch gradient.")),
        *family_controls,
        _num("m", N_("workers m"), 16, _narrow(M, *RANGES["m"]), 1),
        _num("K", N_("wait for K"), 4, _narrow(K_DOMAIN, *RANGES["K"]), 1, N_("gradients per update (K ≤ m here)")),
        _num("H", N_("local steps H"), 4, _narrow(H_DOMAIN, *RANGES["H"]), 1, N_("local SGD: steps between averaging")),
        Control("graph", N_("graph of the nodes"), "ring", options=GRAPHS,
                help=N_("d-psgd and ad-psgd: which nodes are neighbours. A hypercube needs m a power "
                        "of 2; the torus is the most square a × b = m.")),
        Control("stragglers", N_("Who is slow"), "none", options=STRAGGLER_KINDS,
                help=N_("none: every mini-batch of every worker i.i.d. X. b slow workers: the first b always take "
                        "s·X. Slow spells: every worker turns slow (s·X) now and then; π is the long-run fraction of "
                        "slow mini-batches, ρ how long a spell lasts. Measured trace: each worker's own times.")),
        _num("slow", N_("slow workers b"), 1, _narrow(SLOW, *RANGES["slow"]), 1,
             N_("the first b workers are always slow")),
        _num("slowdown", N_("slowdown s"), 4.0, _narrow(SLOWDOWN, *RANGES["slowdown"]), 0.5,
             N_("a slow mini-batch takes s·X (the shift Δ scaled too)")),
        _num("slow_fraction", N_("slow fraction π"), 0.1, _narrow(SLOW_FRACTION, *RANGES["slow_fraction"]), 0.01,
             N_("long-run fraction of slow mini-batches (not of time: a slow one lasts s times longer)")),
        _num("persistence", N_("persistence ρ"), 0.9, _narrow(PERSISTENCE, *RANGES["persistence"]), 0.01,
             N_("0: every mini-batch slow or not independently; 0.99: slow spells of 1/((1−π)(1−ρ)) mini-batches")),
        _num("threshold", N_("straggler threshold (× the step's median)"), 1.2,
             _narrow(THRESHOLD, *RANGES["threshold"]), 0.05,
             N_("a worker whose median ratio to its step's median is at least this is a straggler")),
        Control("trace_mode", N_("use the trace as"), "replay", options=_TRACE_MODES,
                help=N_("replay: each worker's own times in order; per-worker: drawn from each worker's own times; "
                        "pooled: drawn from all times (the i.i.d. answer, who was slow forgotten)")),
        Control("schemes", N_("Schemes to compare"), ("sync", "k-sync", "async", "k-async"),
                options=schemes, multi=True),
        _num("seed", N_("random seed"), 1, _narrow(SEED, *RANGES["seed"]), 1),
        Control("budget", N_("Monte Carlo budget"), UI_DEFAULT_BUDGET, options=tuple(UI_BUDGETS),
                help=N_("work per chart: fast for a class, accurate for a closer look")),
        Control("rt_view", N_("Runtime against"), "K", options=("K", "m")),
        # error page
        Control("problem", N_("problem"), "quadratic", options=REAL_PROBLEMS,
                help=N_("the quadratic model problem (exact curve, the paper's bound), or logistic regression "
                        "on a data set bundled with scikit-learn or on your own file (test accuracy; the bound "
                        "with the data's constants)")),
        _num("l2", N_("L2 regularisation λ"), 0.01, _narrow(LAM, *RANGES["l2"]), 0.001),
        _num("acc_target", N_("target test accuracy"), 0.95, _narrow(TARGET_ACCURACY, *RANGES["acc_target"]), 0.005),
        _num("eta", N_("learning rate η"), 0.05, _narrow(sgd.ETA, *RANGES["eta"]), 0.005),
        _num("L", N_("smoothness L"), 2.0, _narrow(sgd.L_SMOOTH, *RANGES["L"]), 0.1),
        _num("mu", N_("strong convexity μ"), 0.5, _narrow(sgd.MU, *RANGES["mu"]), 0.05),
        _num("sigma2", N_("gradient noise σ²"), 1.0, _narrow(sgd.SIGMA2, *RANGES["sigma2"]), 0.1),
        _num("b", N_("mini-batch b"), 1, _narrow(sgd.BATCH, *RANGES["b"]), 1),
        _num("f0", N_("initial error F₀"), 1.0, _narrow(sgd.F0, *RANGES["f0"]), 0.1),
        _num("dim", N_("dimension d"), 10, _narrow(sgd.DIM, *RANGES["dim"]), 1),
        _num("gamma", N_("staleness factor γ"), 0.5, sgd.GAMMA, 0.05),
        Control("p0_mode", N_("p₀ from"), "measured", options=("measured", "input")),
        _num("p0", N_("p₀ (fresh-gradient probability)"), 0.2, sgd.P0, 0.01),
        Control("lr_rule", N_("learning-rate rule (async)"), "constant", options=sgd.LearningRate.RULES),
        _num("C", N_("adaptive-rule constant C"), 0.01, _narrow(sgd.C_ADAPT, *RANGES["C"]), 0.001),
        _num("eps", N_("target error ε"), 0.05, Domain("eps", *RANGES["eps"], symbol="ε"), 0.005),
        _num("horizon", N_("time horizon T"), 50.0, _narrow(sgd.TIME, *RANGES["horizon"]), 1.0),
        _num("replicas", N_("SGD replicas"), 40, _narrow(sgd.REPLICAS, *RANGES["replicas"]), 10),
        # local SGD / communication
        _num("D", N_("averaging time D"), 0.5, _narrow(COMM_DELAY, *RANGES["D"]), 0.05),
        Control("comm_source", N_("D from"), "slider", options=("slider", "network model")),
        Control("topology", N_("topology"), "ring-allreduce", options=("parameter-server", "ring-allreduce")),
        _num("params_m", N_("model size (million parameters)"), 25.0, Domain("params_m", *RANGES["params_m"]), 1.0),
        _num("gbps", N_("bandwidth (Gbit/s)"), 10.0, Domain("gbps", *RANGES["gbps"]), 1.0),
        _num("latency_ms", N_("latency (ms)"), 0.05, Domain("latency_ms", *RANGES["latency_ms"]), 0.01),
        # timeline
        _num("tl_iters", N_("updates shown"), 6, Domain("tl_iters", *RANGES["tl_iters"], integer=True), 1),
        Control("tl_scheme", N_("scheme"), "k-sync", options=schemes),
        # trade-offs
        Control("axis", N_("sweep over"), "K", options=("K", "m", "H")),
        Control("axis_scheme", N_("scheme"), "k-async", options=schemes),
        # an adaptive schedule (DESIGN §13), on the trade-offs and error pages
        Control("schedule", N_("adaptive schedule"), "off",
                options=("off", "adasync", "adasync-k-async", "adacomm"),
                help=N_("AdaSync raises the K of k-sync or k-async as the training loss falls; AdaComm shortens "
                        "local SGD's H. Each replica applies the rule at every checkpoint from its own loss.")),
        _num("K0", N_("starting K₀"), 2, _narrow(K_DOMAIN, *RANGES["K0"]), 1,
             N_("AdaSync's K until the first checkpoint")),
        _num("H0", N_("starting H₀"), 16, _narrow(H_DOMAIN, *RANGES["H0"]), 1,
             N_("AdaComm's H until the first checkpoint")),
        _num("period", N_("checkpoint period"), 10.0, _narrow(PERIOD, *RANGES["period"]), 1.0,
             N_("wall-clock time between the checkpoints at which the schedule may change K or H")),
        Control("lang", "Language · 语言", "en", options=tuple(LANGUAGES)),
        # lessons: which one runs, its step, the predictions made ("3b": step 3, choice b)
        Control("lesson", N_("lesson"), "none", options=LESSONS),
        Control("step", N_("lesson step"), "1", options=LESSON_STEPS),
        Control("answers", N_("predictions"), (), options=LESSON_ANSWERS, multi=True),
        # your cluster
        Control("trace_source", N_("Trace"), "example", options=("example", "upload")),
        Control("trace_example", N_("example"), next(iter(EXAMPLES)), options=tuple(EXAMPLES)),
    ]
    out = {c.key: c for c in controls}
    if len(out) != len(controls):
        twice = sorted({c.key for c in controls if sum(d.key == c.key for d in controls) > 1})
        raise ValueError(f"control keys declared twice: {twice}")
    return out


#: every control by key (:func:`_controls`), the delay choices (option → :class:`Family`), each
#: choice's controls and label, and each Stragglers choice's controls: derived from the
#: registries, again by :func:`refresh` whenever they change (updated in place: importers keep them)
CONTROLS: dict[str, Control] = {}
FAMILIES: dict[str, Family] = {}
FAMILY_PARAMS: dict[str, tuple[str, ...]] = {}
FAMILY_LABELS: dict[str, str] = {}
KIND_PARAMS: dict[str, tuple[str, ...]] = {}
_DERIVED_FROM: list[Any] = [None]  # the registries' contents the dicts above were derived from
_REFRESH = threading.Lock()


def _registries() -> tuple[Any, ...]:
    return tuple(_delays.FAMILIES.items()), tuple(SCHEMES.items())


def _replace(target: dict[str, Any], new: dict[str, Any]) -> None:
    target.clear()
    target.update(new)


def refresh() -> None:
    """Derive the registry-driven controls again when a registry changed since they were derived
    (a family or a scheme registered, or removed, after import); otherwise nothing.  Called at
    import and at the start of every run (:func:`start`, :func:`distsgd.ui.sidebar.sidebar`)."""
    now = _registries()
    if now == _DERIVED_FROM[0]:
        return
    with _REFRESH:
        if now == _DERIVED_FROM[0]:
            return
        families, family_controls = _families()
        controls = _controls(families, family_controls)
        _replace(CONTROLS, controls)
        _replace(FAMILIES, families)
        _replace(KIND_PARAMS, _kind_params(controls))
        _replace(FAMILY_PARAMS, {o: f.keys for o, f in families.items()})
        _replace(FAMILY_LABELS, {o: f.label for o, f in families.items()})
        _DERIVED_FROM[0] = now


refresh()


def registry_messages() -> dict[str, str]:
    """The English messages the registries declare for the dashboard → where each is declared:
    every delay family's label (``TITLES``) and its parameters' labels and help texts (``VIEWS``).
    They are shown through ``tr``, so in English until the catalogue has them (the catalogue tests
    list what is missing); scheme names and cluster kinds' words are shown as they are, or from
    this module's labels."""
    refresh()
    out: dict[str, str] = {}
    for fam in FAMILIES.values():
        where = f"{fam.cls.__module__}.{fam.cls.__qualname__}"
        out.setdefault(fam.label, f"{where}.TITLES")
        for key in fam.keys:
            c = CONTROLS[key]
            if key != SHIFT_KEY:
                out.setdefault(c.label, f"{where}.VIEWS")
                if c.help:
                    out.setdefault(c.help, f"{where}.VIEWS")
    return out


#: what a choice shows for options that are words (the same words in English, translated where
#: shown); a page may pass its own labels instead, and symbols and scheme names show as they are
CHOICE_LABELS: dict[str, dict[str, str]] = {
    "budget": {"fast": N_("fast"), "balanced": N_("balanced"), "accurate": N_("accurate")},
    "trace_mode": {"replay": N_("replay"), "per-worker": N_("per-worker"), "pooled": N_("pooled")},
    "p0_mode": {"measured": N_("measured"), "input": N_("input")},
    "lr_rule": {"constant": N_("constant"), "adaptive": N_("adaptive"), "staleness": N_("staleness")},
    "problem": {"quadratic": N_("quadratic model problem"), "logreg:breast_cancer": N_("logistic regression: "
                "breast cancer (569 × 30)"), "logreg:digits": N_("logistic regression: digits (1 797 × 64)"),
                UPLOAD_PROBLEM: N_("logistic regression: your data file")},
    "comm_source": {"slider": N_("slider"), "network model": N_("network model")},
    "schedule": {"off": N_("off"), "adasync": N_("AdaSync (k-sync's K)"),
                 "adasync-k-async": N_("AdaSync (k-async's K)"), "adacomm": N_("AdaComm (local SGD's H)")},
    "topology": {"parameter-server": N_("parameter-server"), "ring-allreduce": N_("ring-allreduce")},
    "graph": {"ring": N_("ring"), "torus": N_("torus"), "hypercube": N_("hypercube"),
              "exponential": N_("exponential graph"), "random-regular(d=4)": N_("random 4-regular"),
              "complete": N_("complete graph"), "star": N_("star")},
}
