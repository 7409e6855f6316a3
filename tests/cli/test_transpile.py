import subprocess


def test_transpile_says_not_yet():
    proc = subprocess.run(["pypto-transpile", "kernel.py"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "not yet" in proc.stderr
