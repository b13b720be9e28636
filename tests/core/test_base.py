"""Unit tests of ``binarsity_stats.core._base``: scikit-learn's base classes or the
stand-ins, and the fitted-state helpers (publication in one assignment, snapshots)."""

from __future__ import annotations

import threading

import pytest

from binarsity_stats.core import _base


class _Est:
    def __init__(self, alpha=1.0, beta="x"):
        self.alpha = alpha
        self.beta = beta


def test_names_resolve_to_scikit_learn_when_installed():
    sklearn_base = pytest.importorskip("sklearn.base")
    from sklearn.exceptions import DataConversionWarning, NotFittedError

    assert _base.BaseEstimator is sklearn_base.BaseEstimator
    assert _base.ClassifierMixin is sklearn_base.ClassifierMixin
    assert _base.TransformerMixin is sklearn_base.TransformerMixin
    assert _base.NotFittedError is NotFittedError
    assert _base.DataConversionWarning is DataConversionWarning


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match=r"has no attribute 'Nope'"):
        _base.Nope  # noqa: B018


def test_stand_in_base_estimator_get_and_set_params():
    names = _base._stand_ins()
    Base = names["BaseEstimator"]

    class Est(Base):
        def __init__(self, alpha=1.0, beta="x"):
            self.alpha = alpha
            self.beta = beta

    est = Est(alpha=2.0)
    assert Est._get_param_names() == ["alpha", "beta"]
    assert est.get_params() == {"alpha": 2.0, "beta": "x"}
    assert est.set_params(beta="y") is est
    assert est.beta == "y"
    with pytest.raises(ValueError, match=r"Invalid parameter 'gamma' for Est\."):
        est.set_params(gamma=1)


def test_stand_in_transformer_fit_transform_fits_then_transforms():
    names = _base._stand_ins()
    calls = []

    class T(names["TransformerMixin"]):
        def fit(self, X, **kw):
            calls.append(("fit", X, kw))
            return self

        def transform(self, X):
            calls.append(("transform", X))
            return [2 * v for v in X]

    assert T().fit_transform([1, 2], k=3) == [2, 4]
    assert calls == [("fit", [1, 2], {"k": 3}), ("transform", [1, 2])]


def test_stand_in_not_fitted_error_is_value_and_attribute_error():
    err = _base._stand_ins()["NotFittedError"]
    assert issubclass(err, ValueError) and issubclass(err, AttributeError)
    assert _base._stand_ins()["DataConversionWarning"] is UserWarning


def test_not_fitted_names_the_class_and_is_the_resolved_error():
    err = _base.not_fitted("BinarsityGLM")
    assert isinstance(err, _base.NotFittedError)
    assert isinstance(err, (ValueError, AttributeError))
    assert str(err) == "This BinarsityGLM instance is not fitted yet; call 'fit' first."


def test_publish_fitted_replaces_fitted_state_and_keeps_parameters():
    est = _Est(alpha=3.0)
    est.coef_ = 1
    est.stale_ = "old"
    est.__dunder__ = "kept"
    _base.publish_fitted(est, {"coef_": 2, "n_features_in_": 4})
    assert vars(est) == {"alpha": 3.0, "beta": "x", "__dunder__": "kept", "coef_": 2, "n_features_in_": 4}
    assert not hasattr(est, "stale_")


def test_publish_fitted_is_one_assignment_of_the_dict():
    est = _Est()
    before = est.__dict__
    _base.publish_fitted(est, {"coef_": 1})
    assert est.__dict__ is not before  # a new dict, so an old snapshot is untouched
    assert "coef_" not in before


def test_fitted_snapshot_is_a_copy():
    est = _Est()
    est.coef_ = [1]
    snap = _base.fitted_snapshot(est)
    assert snap == vars(est) and snap is not est.__dict__
    est.alpha = 99
    assert snap["alpha"] == 1.0


def test_readers_never_see_a_mix_of_two_fits():
    est = _Est()
    _base.publish_fitted(est, {"a_": 0, "b_": 0})
    stop = threading.Event()
    mixed = []

    def reader():
        while not stop.is_set():
            snap = _base.fitted_snapshot(est)
            if snap["a_"] != snap["b_"]:
                mixed.append(snap)

    t = threading.Thread(target=reader)
    t.start()
    for k in range(1, 3000):
        _base.publish_fitted(est, {"a_": k, "b_": k})
    stop.set()
    t.join()
    assert not mixed


def test_inconsistent_is_a_value_error_with_the_detail():
    err = _base.inconsistent("coef_ has 3 entries but the design 4")
    assert isinstance(err, ValueError)
    assert str(err).startswith("the fitted state is inconsistent: coef_ has 3 entries but the design 4")
