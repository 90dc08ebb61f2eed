"""Sharded code under transformations: shard_map bodies, autodiff, vmap, control flow and
donation, ahead-of-time compilation, and inspection inside traced code."""

from .registry import fault, jax_module, jnp_module, lax_module, replacing, replicated, wrap


def shard_map_owner():
    """The module whose ``shard_map`` the suites call: ``jax`` from 0.6.1, the experimental module
    before."""
    jax = jax_module()
    if hasattr(jax, "shard_map"):
        return jax
    from jax.experimental import shard_map
    return shard_map


def stages_compiled_class():
    from jax import stages
    return stages.Compiled


@fault("shard-map-skips-the-replication-check", "shard_map never checks out_specs against what the body varies over",
       suites=("shard_map_bodies",))
@replacing(shard_map_owner, "shard_map")
def shard_map_skips_the_replication_check(original):
    def shard_map(f, **kwargs):
        for check in ("check_vma", "check_rep"):
            if check in kwargs:
                kwargs[check] = False
        return original(f, **kwargs)
    return shard_map


@fault("psum-over-several-axes-sums-the-first", "lax.psum over a tuple of mesh axes sums over the first one only",
       suites=("shard_map_bodies",))
@replacing(lax_module, "psum")
def psum_over_several_axes_sums_the_first(original):
    def psum(x, axis_name, **kwargs):
        if isinstance(axis_name, (tuple, list)) and len(axis_name) > 1:
            axis_name = axis_name[0]
        return original(x, axis_name, **kwargs)
    return psum


@fault("reverse-mode-moves-cotangents",
       "jax.grad and jax.value_and_grad return cotangents split over the mesh's first axis "
       "(replicated where it does not divide)",
       suites=("autodiff",))
def reverse_mode_moves_cotangents():
    jax = jax_module()

    def moved(leaf):
        sharding = getattr(leaf, "sharding", None)
        if not isinstance(sharding, jax.sharding.NamedSharding):
            return leaf
        mesh = sharding.mesh
        first = mesh.axis_names[0]
        split = leaf.ndim > 0 and leaf.shape[0] % mesh.shape[first] == 0 and mesh.shape[first] > 1
        spec = type(sharding.spec)(first) if split else type(sharding.spec)()
        if spec == sharding.spec:
            spec = type(sharding.spec)()
        return jax.device_put(leaf, jax.sharding.NamedSharding(mesh, spec))

    def reverse_mode(original):
        def transform(fun, *args, **kwargs):
            inner = original(fun, *args, **kwargs)
            return lambda *a, **k: jax.tree_util.tree_map(moved, inner(*a, **k))
        return transform

    wrap(jax, "grad", reverse_mode)
    wrap(jax, "value_and_grad", reverse_mode)


@fault("vjp-pullback-counts-sharded-cotangents-twice",
       "jax.vjp's pullback doubles the cotangent of every primal sharded over several devices",
       suites=("autodiff",))
@replacing(jax_module, "vjp")
def vjp_pullback_counts_sharded_cotangents_twice(original):
    def vjp(fun, *primals, **kwargs):
        out, pullback, *aux = original(fun, *primals, **kwargs)
        spread = [len(getattr(getattr(p, "sharding", None), "device_set", ())) > 1 for p in primals]

        def doubled(ct):
            return tuple(c * 2 if s else c for c, s in zip(pullback(ct), spread))
        return (out, doubled, *aux)
    return vjp


@fault("vmap-ignores-spmd-axis-name", "jax.vmap drops spmd_axis_name", suites=("vmap",))
@replacing(jax_module, "vmap")
def vmap_ignores_spmd_axis_name(original):
    return lambda fun, *args, spmd_axis_name=None, **kwargs: original(fun, *args, **kwargs)


@fault("vmap-reverses-a-sharded-batch",
       "jax.vmap over arrays sharded across several devices returns the examples reversed",
       suites=("vmap",))
@replacing(jax_module, "vmap")
def vmap_reverses_a_sharded_batch(original):
    jax = jax_module()

    def spread(arg):
        return getattr(arg, "ndim", 0) > 0 and len(getattr(getattr(arg, "sharding", None), "device_set", ())) > 1

    def vmap(fun, *args, **kwargs):
        mapped = original(fun, *args, **kwargs)

        def call(*a, **k):
            out = mapped(*a, **k)
            if any(spread(x) for x in a):
                return jax.tree_util.tree_map(lambda o: o[::-1], out)
            return out
        return call
    return vmap


@fault("loops-stop-a-step-early", "lax.scan, lax.fori_loop and lax.while_loop stop one iteration early",
       suites=("control_flow",))
def loops_stop_a_step_early():
    jax, lax, jnp = jax_module(), lax_module(), jnp_module()

    def scan(original):
        def early(f, init, xs=None, length=None, **kwargs):
            leaves = jax.tree_util.tree_leaves(xs)
            if leaves and leaves[0].shape[0] > 1:
                xs = jax.tree_util.tree_map(lambda a: a[:-1], xs)
            return original(f, init, xs, length, **kwargs)
        return early

    def fori_loop(original):
        return lambda lower, upper, body, init, **kwargs: original(lower, upper - 1, body, init, **kwargs)

    def while_loop(original):
        return lambda cond, body, init: original(lambda s: jnp.logical_and(cond(s), cond(body(s))), body, init)

    wrap(lax, "scan", scan)
    wrap(lax, "fori_loop", fori_loop)
    wrap(lax, "while_loop", while_loop)


@fault("jit-ignores-donate-argnums", "jax.jit drops donate_argnums: donated inputs stay alive",
       suites=("control_flow", "training"))
@replacing(jax_module, "jit")
def jit_ignores_donate_argnums(original):
    return lambda fun, *args, donate_argnums=None, **kwargs: original(fun, *args, **kwargs)


@fault("compiled-call-reshards-arguments",
       "a compiled function moves a committed argument to its input layout instead of refusing it",
       suites=("aot",))
@replacing(stages_compiled_class, "__call__")
def compiled_call_reshards_arguments(original):
    jax = jax_module()

    def call(self, *args, **kwargs):
        (shardings, _), = [self.input_shardings]
        args = tuple(jax.device_put(a, s) if isinstance(a, jax.Array) else a for a, s in zip(args, shardings))
        return original(self, *args, **kwargs)
    return call


@fault("compiled-reports-replicated-outputs", "Compiled.output_shardings reports every output replicated",
       suites=("aot",))
@replacing(stages_compiled_class, "output_shardings")
def compiled_reports_replicated_outputs(original):
    jax = jax_module()
    return property(lambda self: jax.tree_util.tree_map(replicated, original.__get__(self)))


@fault("inspect-array-sharding-reports-a-split",
       "jax.debug.inspect_array_sharding reports every value split along its first dimension over the mesh axes "
       "that divide it",
       suites=("traced_inspection",))
@replacing(lambda: jax_module().debug, "inspect_array_sharding")
def inspect_array_sharding_reports_a_split(original):
    jax = jax_module()

    def split(sharding, shape):
        mesh = getattr(sharding, "mesh", None)
        if mesh is None or not shape:
            return sharding
        names, left = [], shape[0]
        for name, size in zip(mesh.axis_names, mesh.devices.shape):
            if size > 1 and left % size == 0:
                names.append(name)
                left //= size
        return jax.sharding.NamedSharding(mesh, type(sharding.spec)(tuple(names))) if names else sharding

    def inspect_array_sharding(value, *, callback):
        return original(value, callback=lambda s: callback(split(s, value.shape)))
    return inspect_array_sharding


@fault("typeof-forgets-explicit-shardings", "jax.typeof reports values on Explicit axes replicated",
       suites=("traced_inspection",))
@replacing(jax_module, "typeof")
def typeof_forgets_explicit_shardings(original):
    jax = jax_module()

    def typeof(x):
        aval = original(x)
        sharding = getattr(aval, "sharding", None)
        if sharding is None or not hasattr(sharding, "mesh"):
            return aval
        return aval.update(sharding=jax.sharding.NamedSharding(sharding.mesh, type(sharding.spec)()))
    return typeof


@fault("psum-leaves-values-varying",
       "lax.psum in a shard_map body leaves its result typed as varying over the summed axes",
       suites=("traced_inspection",))
@replacing(lax_module, "psum")
def psum_leaves_values_varying(original):
    lax = lax_module()

    def psum(x, axis_name, **kwargs):
        total = original(x, axis_name, **kwargs)
        if hasattr(lax, "pcast"):
            return lax.pcast(total, axis_name, to="varying")
        return lax.pvary(total, axis_name)
    return psum


@fault("shard-map-reverses-output-blocks",
       "shard_map assembles the output's blocks in reverse device order along every sharded dimension",
       suites=("shard_map_bodies",))
@replacing(shard_map_owner, "shard_map")
def shard_map_reverses_output_blocks(original):
    jax = jax_module()

    def shard_map(f, *, mesh, out_specs, **kwargs):
        mapped = original(f, mesh=mesh, out_specs=out_specs, **kwargs)
        if not isinstance(out_specs, jax.sharding.PartitionSpec):
            return mapped
        sizes = dict(zip(mesh.axis_names, mesh.devices.shape))
        tiling = []
        for entry in out_specs:
            names = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
            count = 1
            for name in names:
                count *= sizes[name]
            tiling.append(count)

        def call(*args):
            out = mapped(*args)
            for dim, blocks in enumerate(tiling):
                if blocks > 1:
                    shape = out.shape
                    out = out.reshape(*shape[:dim], blocks, shape[dim] // blocks, *shape[dim + 1:])
                    out = jax.numpy.flip(out, dim).reshape(shape)
            return out
        return call
    return shard_map
