"""all_to_all over several mesh axes and under grad/vmap, and shard_map on Explicit meshes."""

from .registry import fault, lax_module, replacing
from .transformations import shard_map_owner as _shard_map_owner


def _on_explicit_mesh(mesh) -> bool:
    types = getattr(mesh, "axis_types", None) or ()
    return any(getattr(t, "name", str(t)) == "Explicit" for t in (types.keys() if isinstance(types, dict) else types))


@fault("all-to-all-over-several-axes-uses-the-first",
       "lax.all_to_all over a tuple of mesh axes exchanges over the first axis only",
       suites=("collectives",))
@replacing(lax_module, "all_to_all")
def all_to_all_over_several_axes_uses_the_first(original):
    def all_to_all(x, axis_name, split_axis, concat_axis, **kwargs):
        if isinstance(axis_name, (tuple, list)) and len(axis_name) > 1:
            axis_name = axis_name[0]
        return original(x, axis_name, split_axis, concat_axis, **kwargs)
    return all_to_all


@fault("all-to-all-over-several-axes-orders-members-minor-first",
       "lax.all_to_all over a tuple of mesh axes orders a group's members with the last axis major",
       suites=("collectives",))
@replacing(lax_module, "all_to_all")
def all_to_all_over_several_axes_orders_members_minor_first(original):
    def all_to_all(x, axis_name, split_axis, concat_axis, **kwargs):
        if isinstance(axis_name, (tuple, list)) and len(axis_name) > 1:
            axis_name = tuple(reversed(axis_name))
        return original(x, axis_name, split_axis, concat_axis, **kwargs)
    return all_to_all


@fault("explicit-shard-map-reverses-out-specs-axes",
       "shard_map on an Explicit mesh assembles each out_specs entry of several axes in reverse order",
       suites=("shard_map_bodies",))
@replacing(_shard_map_owner, "shard_map")
def explicit_shard_map_reverses_out_specs_axes(original):
    def shard_map(f, **kwargs):
        mesh = kwargs.get("mesh")
        if mesh is not None and _on_explicit_mesh(mesh) and "out_specs" in kwargs:
            spec = kwargs["out_specs"]
            kwargs["out_specs"] = type(spec)(*(tuple(reversed(e)) if isinstance(e, tuple) else e for e in spec))
        return original(f, **kwargs)
    return shard_map


@fault("explicit-shard-map-psum-drops-its-axis",
       "lax.psum in a shard_map body on an Explicit mesh sums over none of the named axes",
       suites=("shard_map_bodies",))
@replacing(_shard_map_owner, "shard_map")
def explicit_shard_map_psum_drops_its_axis(original):
    def shard_map(f, **kwargs):
        mesh = kwargs.get("mesh")
        if mesh is None or not _on_explicit_mesh(mesh):
            return original(f, **kwargs)
        lax = lax_module()

        def body(*args):
            psum = lax.psum
            lax.psum = lambda x, axis_name, **kw: x
            try:
                return f(*args)
            finally:
                lax.psum = psum
        return original(body, **kwargs)
    return shard_map
