import os
import lit.formats

config.name = "DISC"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.disc_obj_root, "test")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "CMakeLists.txt"]
tool_dirs = [os.path.join(config.disc_obj_root, "tools", "disc-opt"),
             config.llvm_tools_dir]
config.environment["PATH"] = os.pathsep.join(tool_dirs + [config.environment.get("PATH", os.environ.get("PATH", ""))])

# The CUDA toolkit's ptxas, for the tests that compile to cubins (REQUIRES:
# ptxas); %cuda_toolkit is where it is.
cuda_toolkit = next((path for path in (os.environ.get("DISC_CUDA_TOOLKIT"),
                                       os.environ.get("CUDA_HOME"),
                                       "/usr/local/cuda")
                     if path and os.path.exists(os.path.join(path, "bin", "ptxas"))),
                    "")
if cuda_toolkit:
    config.available_features.add("ptxas")
config.substitutions.append(("%cuda_toolkit", cuda_toolkit))
