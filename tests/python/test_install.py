"""`cmake --install` puts the package into the interpreter's site dir under
the prefix; it imports from there (no build tree on the path) and reads a
state."""
import os
import subprocess
import sys

from conftest import run


def test_install_and_import(job, tmp_path):
    build = os.environ["BLOOMSHARD_BUILD_DIR"]
    prefix = tmp_path / "prefix"
    run(["cmake", "--install", build, "--prefix", prefix, "--component", "python"])
    site = [os.path.join(d, n) for d, dirs, _ in os.walk(prefix) for n in dirs if n == "bloomshard"]
    assert len(site) == 1, site
    env = dict(os.environ, PYTHONPATH=os.path.dirname(site[0]))
    code = ("import bloomshard,sys; assert bloomshard.__file__.startswith(sys.argv[1]); "
            "print(bloomshard.open_state(sys.argv[2]).contains([sys.argv[3]]))")
    r = subprocess.run([sys.executable, "-c", code, str(prefix), str(job["state"]), job["kept"][0]],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[True]", r.stderr
    rel = os.path.relpath(os.path.dirname(site[0]), prefix)
    ver = "%d.%d" % sys.version_info[:2]
    assert rel in ("lib/python%s/dist-packages" % ver, "lib/python%s/site-packages" % ver), rel
