"""Calling the user's function on a case under one run's defences: the
run's poison in torch's free device memory before the call, and for the
perturbed run the holding kernel around it.

A defence that could not be applied to a case is recorded for that case,
by name (`poison`, `perturb`), with why; a check or test with such a case
fails unless the user accepted the defence's absence by name
(`allow_missing_defences=("perturb",)`), and then each case says so. A
defence that does not apply (a host function has no device memory to
poison and no schedule to perturb) is noted, never counted as missing."""

from __future__ import annotations

import warnings

from . import _defences, _torch_cuda
from ._cases import Case, Export
from ._call import call_on_case

DEFENCES = {
    "poison": "free device memory poisoned before each call",
    "perturb": "the perturbed run (a kernel holding a share of the SMs while the function runs)",
}
"""The defences a case may lack, by the name `allow_missing_defences` takes."""


class DefenceWarning(UserWarning):
    """A defence of primlab.check could not be applied to this function."""


class PerturbationLost(RuntimeError):
    """The holding kernel could not be started for a case: the perturbed
    run stops there and is not counted (the case's missing defences say why)."""


def allowed_defences(value, where: str) -> frozenset:
    """`allow_missing_defences` as a set of defence names: None, one name,
    or names. ValueError naming the known ones for any other name."""
    if value is None:
        return frozenset()
    names = (value,) if isinstance(value, str) else tuple(value)
    unknown = [n for n in names if n not in DEFENCES]
    if unknown:
        known = ", ".join(f"{k!r} ({v})" for k, v in DEFENCES.items())
        raise ValueError(f"{where}: allow_missing_defences names {unknown!r}; the defences are {known}")
    return frozenset(names)


def missing_message(subject: str, missing: dict, cases_checked: int) -> str:
    """The AssertionError text for cases that lacked a defence they were not
    allowed to lack: each defence, how many cases, the first case and why,
    and the option that accepts it."""
    lines = [f"primlab: {subject}: a defence could not be applied, so a pass here may be by accident:"]
    for defence, cases in missing.items():
        first, why = cases[0]
        lines.append(
            f"  {defence} ({DEFENCES[defence]}): not applied to {len(cases)} of {cases_checked} case(s), "
            f"the first {first.describe()}: {why}"
        )
    names = tuple(missing)
    lines.append(f"  to accept this, pass allow_missing_defences={names!r}")
    return "\n".join(lines)


class CaseRuns:
    """One check's runs over one export, for one function's device."""

    def __init__(self, export: Export, device=None, convert=None):
        self.export, self.device, self.convert = export, device, convert
        self.notes: list[str] = []
        self.missing: dict[str, dict[str, str]] = {}
        """By case name: each defence it lacks, with why."""
        self._defences = {}
        self._held = {}
        self._lost = {}  # by gpu: why the holding kernel is gone for the later cases

    def runs(self) -> list[_defences.Run]:
        """The runs, in order (the poisons are the harness's)."""
        return _defences.runs(self._load(None))

    def note(self, text: str) -> None:
        """Records, once, what this check did not do."""
        if text not in self.notes:
            self.notes.append(text)

    def lacks(self, case: Case, defence: str, why: str) -> None:
        """Records that `case` did not get `defence`, and why (the first reason is kept)."""
        self.missing.setdefault(case.name, {}).setdefault(defence, why)
        self.note(f"{defence}: {why}")

    def missing_of(self, cases, allowed=frozenset()) -> dict:
        """The defences `cases` lacked that are not `allowed`: by defence, the (case, why) pairs."""
        out: dict[str, list] = {}
        for case in cases:
            for defence, why in self.missing.get(case.name, {}).items():
                if defence not in allowed:
                    out.setdefault(defence, []).append((case, why))
        return out

    def _claims_device(self) -> bool:
        """Whether the function says it takes device arrays (`device=` a device, or `convert=`)."""
        named = self.device is not None and str(self.device) not in ("numpy", "cpu")
        return named or self.convert is not None

    def _load(self, gpu) -> dict:
        if gpu not in self._defences:
            if gpu is None:
                self._defences[gpu] = _defences.load()
            else:
                torch = _torch_cuda.torch_if_imported()
                props = torch.cuda.get_device_properties(gpu)
                arch = f"compute_{props.major}{props.minor}"
                self._defences[gpu] = _defences.load(arch, props.multi_processor_count, len(self.export.cases))
        return self._defences[gpu]

    def cases_of(self, run: _defences.Run) -> list[Case]:
        """The cases `run` applies to: every case for a poisoned run; for the
        perturbed run the cases up to the plan's size limit. A host function
        gets no perturbed run (noted); a device function whose holding kernel
        cannot run lacks the defence on every case it would have covered."""
        if not run.perturbed:
            return list(self.export.cases)
        gpu = _torch_cuda.cuda_device(self.device)
        if gpu is None:
            why = (
                "perturbed run: not run (no CUDA device: the function takes host arrays and torch has not "
                "initialised CUDA; pass device='cuda' or use torch on the GPU)"
            )
            if not self._claims_device():
                self.note(why)  # a host function has no schedule to perturb
                return []
            for case in self.export.cases:
                self.lacks(case, "perturb", why)
            return []
        held = self._held_sms(gpu)
        if held is None:
            covered = self._perturbable(gpu, self.export.cases)
            for case in covered:
                self.lacks(case, "perturb", self._lost[gpu])
            return []
        return self._perturbable(gpu, self.export.cases)

    def _perturbable(self, gpu, cases) -> list[Case]:
        """The cases within the perturbation plan's size limit (all when no plan came)."""
        plan = self._load(gpu).get("perturbation")
        limit = plan["max_len"] if plan else None
        return [c for c in cases if limit is None or c.n <= limit]

    def _held_sms(self, gpu):
        if gpu not in self._held:
            defences = self._load(gpu)
            plan = defences.get("perturbation")
            try:
                if plan is None:
                    raise RuntimeError(defences.get("perturbation_missing") or "the harness gave no plan")
                self._held[gpu] = _torch_cuda.HeldSMs(plan, gpu)
            except Exception as error:  # any failure of ours: each case lacks it, the check goes on
                self._lost[gpu] = f"perturbed run: not run ({type(error).__name__}: {error})"
                self._held[gpu] = None
        return self._held[gpu]

    def call(self, fn, case: Case, run: _defences.Run) -> None:
        """Calls `fn` on `case` under `run`; its outputs are written for the
        harness's verdict. PerturbationLost when the holding kernel would not
        start for this case (the case lacks `perturb`, and so do the later ones)."""
        gpu = _torch_cuda.cuda_device(self.device)
        if gpu is not None:
            self._poison(gpu, case, run)
        elif self._claims_device():
            self.lacks(case, "poison", "free device memory not poisoned (no CUDA device through torch to poison)")
        if not run.perturbed:
            call_on_case(fn, self.export, case, self.device, self.convert)
            return
        held = self._held_sms(gpu)
        try:
            held.hold(held.plan["cases"][self.export.cases.index(case)])
        except Exception as error:
            self._held[gpu] = None
            why = f"perturbed run: stopped at {case.describe()} ({type(error).__name__}: {error})"
            self._lost[gpu] = why
            self.lacks(case, "perturb", why)
            raise PerturbationLost(str(error)) from error
        try:
            call_on_case(fn, self.export, case, self.device, self.convert)
        except BaseException:
            try:
                held.release()
            except Exception:
                pass  # the function's own error is the one to show
            raise
        held.release()

    def _poison(self, gpu: int, case: Case, run: _defences.Run) -> None:
        pattern = _defences.pattern_for(run.poison, [b.dtype for b in case.outputs])
        try:
            _, left_out = _torch_cuda.poison_free_blocks(gpu, pattern)
        except Exception as error:  # the allocator's, never the function's: the case lacks it, the call goes on
            self.lacks(case, "poison", f"free device memory not poisoned ({type(error).__name__}: {error})")
            return
        if left_out is not None:
            self.lacks(case, "poison", f"free device memory partly poisoned: {left_out}")

    def perturbation_lost(self, cases) -> None:
        """The perturbed run stopped part way: none of `cases` is judged under it, so each lacks it."""
        why = next(iter(self._lost.values()), "perturbed run: stopped")
        for case in cases:
            self.lacks(case, "perturb", why)

    def allowed_lines(self, cases, allowed) -> list[str]:
        """One line per allowed defence that some of `cases` lacked: the defence, the cases by
        name, and the first reason."""
        lines = []
        for defence, pairs in self.missing_of(cases).items():
            if defence in allowed:
                names = ", ".join(case.name for case, _ in pairs)
                lines.append(
                    f"{defence} not applied (allowed by allow_missing_defences) to {len(pairs)} case(s) "
                    f"({names}): {pairs[0][1]}"
                )
        return lines

    def judge_defences(self, subject: str, cases, allowed, checked: int) -> list[str]:
        """AssertionError when a case of `cases` lacked a defence not in `allowed`; else the
        lines of the allowed ones ([`allowed_lines`]), each also warned about."""
        missing = self.missing_of(cases, allowed)
        if missing:
            raise AssertionError(missing_message(subject, missing, checked))
        lines = self.allowed_lines(cases, allowed)
        for line in lines:
            warnings.warn(f"primlab: {subject}: {line}", DefenceWarning, stacklevel=3)
        return lines
