"""Two readers mixed weight by weight: the mixture, and the mismatches that must not be averaged."""

from pathlib import Path

import numpy as np
import pytest

from cragraph_lab.reader_training import mixed_weights


def _save(path: Path, **arrays: np.ndarray) -> Path:
    np.savez(path, **arrays)
    return path


def test_mixture_lies_between_the_readers_in_the_base_dtype(tmp_path: Path) -> None:
    base = _save(tmp_path / "a.npz", w=np.array([0.0, 2.0], dtype=np.float16), b=np.ones(3, dtype=np.float16))
    other = _save(tmp_path / "b.npz", w=np.array([1.0, 4.0], dtype=np.float16), b=np.zeros(3, dtype=np.float16))
    mixed = mixed_weights(base, other, 0.25)
    assert mixed["w"].dtype == np.float16
    np.testing.assert_allclose(mixed["w"], [0.25, 2.5])
    np.testing.assert_allclose(mixed["b"], [0.75] * 3)
    np.testing.assert_allclose(mixed_weights(base, other, 1.0)["w"], [1.0, 4.0])


def test_readers_of_other_shapes_or_a_weight_outside_0_1_are_refused(tmp_path: Path) -> None:
    base = _save(tmp_path / "a.npz", w=np.zeros(2, dtype=np.float16))
    other = _save(tmp_path / "b.npz", w=np.zeros(3, dtype=np.float16))
    renamed = _save(tmp_path / "c.npz", v=np.zeros(2, dtype=np.float16))
    with pytest.raises(ValueError, match="different shapes"):
        mixed_weights(base, other, 0.5)
    with pytest.raises(ValueError, match="different shapes"):
        mixed_weights(base, renamed, 0.5)
    with pytest.raises(ValueError, match="within 0 .. 1"):
        mixed_weights(base, base, 1.5)
