"""Calling the user's function on a case under one run's defences: the
run's poison in torch's free device memory before the call, and for the
perturbed run the holding kernel around it. What could not be applied is
noted once (and warned about), never passed off as done."""

from __future__ import annotations

import warnings

from . import _defences, _torch_cuda
from ._cases import Case, Export
from ._call import call_on_case


class DefenceWarning(UserWarning):
    """A defence of primlab.check could not be applied to this function."""


class PerturbationLost(RuntimeError):
    """The holding kernel could not be started for a case: the perturbed
    run stops there and is not counted (the note says why)."""


class CaseRuns:
    """One check's runs over one export, for one function's device."""

    def __init__(self, export: Export, device=None, convert=None):
        self.export, self.device, self.convert = export, device, convert
        self.notes: list[str] = []
        self._defences = {}
        self._held = {}

    def runs(self) -> list[_defences.Run]:
        """The runs, in order (the poisons are the harness's)."""
        return _defences.runs(self._load(None))

    def note(self, text: str, warn: bool = True) -> None:
        """Records what this check could not do (and warns, once, when `warn`)."""
        if text not in self.notes:
            self.notes.append(text)
            if warn:
                warnings.warn(f"primlab: {text}", DefenceWarning, stacklevel=4)

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
        perturbed run the cases up to the plan's size limit, or none (with a
        note) when no CUDA device is in play or the kernel cannot be loaded."""
        if not run.perturbed:
            return list(self.export.cases)
        gpu = _torch_cuda.cuda_device(self.device)
        if gpu is None:
            # A host function has no schedule to perturb: noted, not warned
            # about; one given device arrays (device= or convert=) is warned.
            self.note(
                "perturbed run: not run (no CUDA device: the function takes host arrays and torch has not "
                "initialised CUDA; pass device='cuda' or use torch on the GPU)",
                warn=self.device is not None or self.convert is not None,
            )
            return []
        held = self._held_sms(gpu)
        if held is None:
            return []
        return [c for c in self.export.cases if c.n <= held.plan["max_len"]]

    def _held_sms(self, gpu):
        if gpu not in self._held:
            defences = self._load(gpu)
            plan = defences.get("perturbation")
            try:
                if plan is None:
                    raise RuntimeError(defences.get("perturbation_missing") or "the harness gave no plan")
                self._held[gpu] = _torch_cuda.HeldSMs(plan, gpu)
            except Exception as error:  # any failure of ours: noted, the run not counted, the check goes on
                self.note(f"perturbed run: not run ({type(error).__name__}: {error})")
                self._held[gpu] = None
        return self._held[gpu]

    def call(self, fn, case: Case, run: _defences.Run) -> None:
        """Calls `fn` on `case` under `run`; its outputs are written for the
        harness's verdict."""
        gpu = _torch_cuda.cuda_device(self.device)
        if gpu is not None:
            self._poison(gpu, case, run)
        if not run.perturbed:
            call_on_case(fn, self.export, case, self.device, self.convert)
            return
        held = self._held_sms(gpu)
        try:
            held.hold(held.plan["cases"][self.export.cases.index(case)])
        except Exception as error:
            self._held[gpu] = None
            self.note(f"perturbed run: stopped at {case.describe()} ({type(error).__name__}: {error})")
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
        except Exception as error:  # the allocator's, never the function's: noted, the call goes on
            self.note(f"free device memory not poisoned ({type(error).__name__}: {error})")
            return
        if left_out is not None:
            self.note(f"free device memory partly poisoned: {left_out}")
