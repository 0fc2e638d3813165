#!/usr/bin/env python3
"""Renders a torchtitan Python config (a function returning Trainer.Config) as the TOML job config hetsim imports.

torchtitan's configs are Python since 2026-02 (pytorch/torchtitan 9810191, "Config System Refactor: TOML to Python
Dataclass Registry"): a function such as

    def llama3_8b() -> Trainer.Config:
        return Trainer.Config(model_spec=model_registry("8B"),
                              parallelism=ParallelismConfig(tensor_parallel_degree=2), ...)

or one derived from another (`config = llama3_debugmodel(); config.parallelism.tensor_parallel_degree = 2;
return config`). This script reads such a file with Python's own parser (the `ast` module) and never runs it: it
follows constructor calls with literal arguments, arithmetic on literals, assignments to the config's fields and calls
of other config functions of the same file or of the files given with --with. Anything else a field hetsim reads
depends on (a loop, a branch, a computed value) is refused with the file and line. The TOML uses torchtitan's
pre-2026 keys, which `hetsim import torchtitan` reads (docs/megatron.md, "torchtitan's Python configs"):

    python3 scripts/torchtitan_config.py torchtitan/models/llama3/config_registry.py llama3_8b > llama3_8b.toml
    hetsim import torchtitan llama3_8b.toml --cluster CLUSTER --nodes 8 --out-dir plan/
"""
import argparse
import ast
import re
import sys


class Unreadable(Exception):
    pass


class Call:
    """A constructor call read from the source: its callee's dotted name, positional and keyword arguments."""

    def __init__(self, name, args, kwargs):
        self.name, self.args, self.kwargs = name, args, kwargs


UNKNOWN = object()  # a value the script does not follow (kept only if no field hetsim reads needs it)


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return None if base is None else base + "." + node.attr
    return None


class Reader:
    def __init__(self, files):
        self.functions = {}  # name -> (FunctionDef, file)
        self.model_package = {}  # file -> the torchtitan model package its model_registry comes from
        for path, package in files:
            tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
            for node in tree.body:
                if isinstance(node, ast.FunctionDef):
                    self.functions.setdefault(node.name, (node, path))
                if isinstance(node, ast.ImportFrom) and any(a.name == "model_registry" for a in node.names):
                    module = node.module or ""
                    name = package if node.level else module
                    self.model_package[path] = (name or "").split(".")[-1] if name else None

    def value(self, node, env, path):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.value(e, env, path) for e in node.elts]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.value(node.operand, env, path)
            return -v if isinstance(v, (int, float)) else UNKNOWN
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add, ast.Sub, ast.FloorDiv)):
            a, b = self.value(node.left, env, path), self.value(node.right, env, path)
            if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
                return UNKNOWN
            ops = {ast.Mult: lambda x, y: x * y, ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y,
                   ast.FloorDiv: lambda x, y: x // y}
            return ops[type(node.op)](a, b)
        if isinstance(node, ast.Name):
            return env.get(node.id, UNKNOWN)
        if isinstance(node, ast.Attribute):
            base = self.value(node.value, env, path)
            if not isinstance(base, Call):
                return UNKNOWN
            # A sub-config the constructor left at its default (config.compile of a Trainer.Config built without
            # compile=): created empty, so that assignments to its fields are kept.
            return base.kwargs.setdefault(node.attr, Call(node.attr, [], {}))
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if name is None:
                return UNKNOWN
            if name in self.functions and not node.args and not node.keywords:
                return self.run(name)
            call = Call(name, [self.value(a, env, path) for a in node.args],
                        {k.arg: self.value(k.value, env, path) for k in node.keywords if k.arg})
            if name == "model_registry":
                call.kwargs["__package__"] = self.model_package.get(path)
            return call
        return UNKNOWN

    def run(self, name, args=(), kwargs=None, returns=True):
        """Follows function `name` called with `args` and `kwargs` (values): what it returns (`returns`)."""
        fn, path = self.functions[name]
        env = self.bind(fn, args, kwargs or {}, path)
        done, value = self.block(fn.body, env, path, name)
        if done or not returns:
            return value
        raise Unreadable(f"{path}:{fn.lineno}: {name}: returns no config")

    def bind(self, fn, args, kwargs, path):
        params = fn.args.posonlyargs + fn.args.args
        env = {}
        defaults = fn.args.defaults
        for i, p in enumerate(params):
            if i < len(args):
                env[p.arg] = args[i]
            elif i >= len(params) - len(defaults):
                env[p.arg] = self.value(defaults[i - (len(params) - len(defaults))], {}, path)
        for p, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults):
            env[p.arg] = self.value(d, {}, path) if d is not None else UNKNOWN
        env.update(kwargs)
        return env

    def block(self, stmts, env, path, name):
        """Follows statements: (True, value) once one returns, else (False, None)."""
        for stmt in stmts:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # a docstring
            if isinstance(stmt, (ast.Assert, ast.ImportFrom, ast.Import, ast.Pass)):
                continue
            if isinstance(stmt, ast.Return):
                return True, self.value(stmt.value, env, path)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                self.assign(stmt.targets[0], self.value(stmt.value, env, path), env, path, stmt.lineno)
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                # A helper that changes the config it is given (torchtitan_recipes' _use_spmd_types): followed when
                # its definition is among the files read.
                callee = dotted(stmt.value.func)
                if callee not in self.functions:
                    raise Unreadable(f"{path}:{stmt.lineno}: {name}: {ast.unparse(stmt.value)} calls {callee}, which "
                                     "is not in the files read and may change the config (give its file with --with)")
                self.run(callee, [self.value(a, env, path) for a in stmt.value.args],
                         {k.arg: self.value(k.value, env, path) for k in stmt.value.keywords if k.arg}, returns=False)
                continue
            if isinstance(stmt, ast.If):
                test = self.value(stmt.test, env, path)
                if test is UNKNOWN or isinstance(test, Call):
                    raise Unreadable(f"{path}:{stmt.lineno}: {name}: the condition {ast.unparse(stmt.test)} is not a "
                                     "literal value")
                done, value = self.block(stmt.body if test else stmt.orelse, env, path, name)
                if done:
                    return done, value
                continue
            raise Unreadable(f"{path}:{stmt.lineno}: {name}: a {type(stmt).__name__} statement is not followed "
                             "(only constructor calls with literal arguments, field assignments, conditions on "
                             "literals and calls of other config functions are read; nothing is run)")
        return False, None

    def assign(self, target, value, env, path, line):
        if isinstance(target, ast.Name):
            env[target.id] = value
            return
        if isinstance(target, ast.Attribute):
            owner = self.value(target.value, env, path)
            if isinstance(owner, Call):
                owner.kwargs[target.attr] = value
                return
        raise Unreadable(f"{path}:{line}: an assignment to {ast.unparse(target)} is not followed")


def field(call, *names):
    for name in names:
        if isinstance(call, Call) and name in call.kwargs:
            v = call.kwargs[name]
            if v is UNKNOWN:
                raise Unreadable(f"{name}: its value is computed; hetsim reads literal values only")
            return v
    return None


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(e) for e in v) + "]"
    return str(v)


def to_toml(config, source, function):
    if isinstance(config, Call) and "." not in config.name and not config.name.endswith("Config"):
        raise Unreadable(f"{function}: its config comes from {config.name}(), a function not in the files read "
                         "(give its file with --with)")
    if not isinstance(config, Call) or not config.name.endswith("Config"):
        raise Unreadable(f"{function}: does not return a config constructed in the file")
    spec = field(config, "model_spec")
    if not isinstance(spec, Call) or spec.name != "model_registry" or not spec.args:
        raise Unreadable(f"{function}: model_spec is not model_registry(\"FLAVOR\") of a torchtitan model")
    if not spec.kwargs.get("__package__"):
        raise Unreadable(f"{function}: which model's model_registry is imported is not known (give --package)")
    tables = {"model": {"name": spec.kwargs["__package__"], "flavor": spec.args[0]}}
    converters = []
    for c in spec.kwargs.get("converters") or []:
        name = c.name.split(".")[0] if isinstance(c, Call) else "?"
        converters.append({"Float8LinearConverter": "float8", "MXFP8LinearConverter": "mx"}.get(name, name))
    if converters:
        tables["model"]["converters"] = converters
    training, parallel = field(config, "training"), field(config, "parallelism")
    tokens = field(training, "num_tokens_per_microbatch_per_dp_rank") or 16384  # TrainingConfig's defaults
    context = field(training, "max_context_length") or 2048
    step_tokens = field(training, "num_tokens_per_train_step") or -1
    microbatches = field(parallel, "num_pp_microbatches") or 1
    pp = field(parallel, "pipeline_parallel_degree") or 1
    if tokens % context:
        raise Unreadable(f"{function}: {tokens} tokens a microbatch is no whole number of {context}-token sequences")
    per_microbatch = tokens // context
    tables["training"] = {"seq_len": context, "local_batch_size": per_microbatch * (microbatches if pp > 1 else 1)}
    if step_tokens > 0:
        tables["training"]["global_batch_size"] = step_tokens // context
    for key in ("mixed_precision_param", "mixed_precision_reduce", "enable_cpu_offload"):
        if field(training, key) is not None:
            tables["training"][key] = field(training, key)
    tables["parallelism"] = {}
    for key in ("data_parallel_replicate_degree", "data_parallel_shard_degree", "tensor_parallel_degree",
                "pipeline_parallel_degree", "context_parallel_degree", "expert_parallel_degree",
                "pipeline_parallel_schedule", "pipeline_parallel_layers_per_stage"):
        if field(parallel, key) is not None:
            tables["parallelism"][key] = field(parallel, key)
    if pp > 1:
        tables["parallelism"]["pipeline_parallel_microbatch_size"] = per_microbatch
    compile_ = field(config, "compile")
    if field(compile_, "enable") is not None:
        tables["compile"] = {"enable": field(compile_, "enable")}
    if field(compile_, "enable_async_tensor_parallel"):
        tables["parallelism"]["enable_async_tensor_parallel"] = True
    ac = field(config, "activation_checkpoint")  # Trainer.Config's default: SelectiveAC.Config(); None: no AC
    modes = {"SelectiveAC": "selective", "FullAC": "full", "ActivationCheckpointing": "none"}
    if ac is None:
        mode = "none" if "activation_checkpoint" in config.kwargs else "selective"
    else:
        mode = modes.get(ac.name.split(".")[0]) if isinstance(ac, Call) else None
    if mode is None:
        raise Unreadable(f"{function}: activation_checkpoint {getattr(ac, 'name', ac)} is not SelectiveAC, FullAC "
                         "or ActivationCheckpointing (none)")
    tables["activation_checkpoint"] = {"mode": mode}
    if mode == "selective":  # SelectiveAC is per-op (torchtitan/distributed/activation_checkpoint.py): 2025's "op"
        tables["activation_checkpoint"]["selective_ac_option"] = "op"
    ft = field(config, "fault_tolerance")
    if isinstance(ft, Call) and field(ft, "enable"):
        tables["fault_tolerance"] = {"enable": True, "semi_sync_method": field(ft, "semi_sync_method") or ""}
    out = [f"# Rendered from {source}, {function}() by scripts/torchtitan_config.py (read with Python's ast, not run)."]
    for table, keys in tables.items():
        out.append(f"\n[{table}]")
        out.extend(f"{k} = {toml_value(v)}" for k, v in keys.items())
    return "\n".join(out) + "\n"


def package_of(path, given):
    if given:
        return given
    m = re.search(r"models/([A-Za-z0-9_]+)/[^/]+\.py$", path)
    return m.group(1) if m else None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file", help="the Python file that defines the config function")
    p.add_argument("function", help="the config function, as torchtitan's --config names it")
    p.add_argument("--with", dest="others", action="append", default=[],
                   help="another Python file whose config functions FILE imports (repeatable)")
    p.add_argument("--package", help="the torchtitan model whose model_registry a relative import names "
                   "(default: from the path, torchtitan/models/NAME/...)")
    a = p.parse_args()
    try:
        files = [(a.file, package_of(a.file, a.package))] + [(f, package_of(f, a.package)) for f in a.others]
        reader = Reader(files)
        if a.function not in reader.functions:
            raise Unreadable(f"{a.file}: no function {a.function}")
        sys.stdout.write(to_toml(reader.run(a.function), a.file, a.function))
    except (Unreadable, SyntaxError, OSError) as e:
        sys.stderr.write(f"torchtitan_config.py: {e}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
