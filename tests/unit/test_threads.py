"""Sizing TVM's thread pool: cores counted from a faked sysfs topology, and the user's setting kept."""

from __future__ import annotations

import pytest

from tvm_wheels import host, threads


def fake_sysfs(tmp_path, siblings: dict[int, str]):
    for cpu, text in siblings.items():
        topo = tmp_path / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "thread_siblings_list").write_text(text + "\n")
    return tmp_path


def test_hyper_threads_of_one_core_count_once(tmp_path):
    sysfs = fake_sysfs(tmp_path, {0: "0,2", 1: "1,3", 2: "0,2", 3: "1,3"})
    assert host.physical_cores({0, 1, 2, 3}, sysfs) == 2


def test_cores_without_hyper_threads_all_count(tmp_path):
    sysfs = fake_sysfs(tmp_path, {0: "0", 1: "1"})
    assert host.physical_cores({0, 1}, sysfs) == 2  # TVM's own default would start 1 thread here


def test_only_the_cpus_this_process_may_use_count(tmp_path):
    sysfs = fake_sysfs(tmp_path, {0: "0-1", 1: "0-1", 2: "2-3", 3: "2-3"})
    assert host.physical_cores({2}, sysfs) == 1


def test_without_topology_each_cpu_is_a_core(tmp_path):
    assert host.physical_cores({0, 1, 2}, tmp_path) == 3


def test_unset_pool_size_becomes_the_core_count(monkeypatch):
    monkeypatch.setattr(host, "physical_cores", lambda: 6)
    env = {}
    threads.use_all_cores(env)
    assert env == {"TVM_NUM_THREADS": "6"}


@pytest.mark.parametrize("env", [{"TVM_NUM_THREADS": "1"}, {"OMP_NUM_THREADS": "3"}])
def test_a_size_the_user_set_is_kept(monkeypatch, env):
    monkeypatch.setattr(host, "physical_cores", lambda: 6)
    before = dict(env)
    threads.use_all_cores(env)
    assert env == before
