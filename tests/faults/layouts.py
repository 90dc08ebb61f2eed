"""NamedSharding layouts: index maps, shard shapes, replication, equivalence, replica ids."""

from .registry import fault, named_sharding_class, replacing, replicated


@fault("swap-index-map", "NamedSharding.devices_indices_map swaps two devices' blocks",
       suites=("named_sharding", "device_put", "congruence", "visualize", "positional_sharding", "argument_forms",
               "multihost_utils"))
@replacing(named_sharding_class, "devices_indices_map")
def swap_index_map(original):
    def devices_indices_map(self, global_shape):
        mapping = dict(original(self, global_shape))
        devices = list(mapping)
        if len(devices) >= 2:
            mapping[devices[0]], mapping[devices[-1]] = mapping[devices[-1]], mapping[devices[0]]
        return mapping
    return devices_indices_map


@fault("shard-shape-never-rejects", "NamedSharding.shard_shape answers for indivisible shapes",
       suites=("congruence",))
@replacing(named_sharding_class, "shard_shape")
def shard_shape_never_rejects(original):
    def shard_shape(self, global_shape):
        try:
            return original(self, global_shape)
        except ValueError:
            return original(replicated(self), global_shape)
    return shard_shape


@fault("shard-shape-reversed", "NamedSharding.shard_shape returns its dimensions reversed",
       suites=("named_sharding", "congruence"))
@replacing(named_sharding_class, "shard_shape")
def shard_shape_reversed(original):
    return lambda self, global_shape: tuple(original(self, global_shape))[::-1]


@fault("never-fully-replicated", "NamedSharding.is_fully_replicated is always False",
       suites=("named_sharding",))
def never_fully_replicated():
    named_sharding_class().is_fully_replicated = property(lambda self: False)


@fault("addressable-devices-drop-one", "NamedSharding.addressable_devices omits one device",
       suites=("named_sharding",))
@replacing(named_sharding_class, "addressable_devices")
def addressable_devices_drop_one(original):
    def addressable_devices(self):
        devices = set(original.__get__(self))
        return devices - {min(devices, key=lambda d: d.id)} if len(devices) > 1 else devices
    return property(addressable_devices)


@fault("equivalent-always", "Sharding.is_equivalent_to is always True",
       suites=("named_sharding",))
def equivalent_always():
    named_sharding_class().is_equivalent_to = lambda self, other, ndim: True


@fault("equivalent-only-to-itself", "is_equivalent_to is True only for the very same object",
       suites=("named_sharding",))
def equivalent_only_to_itself():
    named_sharding_class().is_equivalent_to = lambda self, other, ndim: self is other


@fault("replica-id-zero", "every shard reports replica_id 0",
       suites=("named_sharding", "device_put"))
def replica_id_zero():
    from jax._src import array
    array.Shard.replica_id = property(lambda self: 0)


@fault("named-sharding-drops-unknown-axes",
       "NamedSharding silently drops spec entries naming axes the mesh lacks (or repeats)",
       suites=("named_sharding",))
def named_sharding_drops_unknown_axes():
    import jax.sharding as shd
    original = shd.NamedSharding

    def named_sharding(mesh, spec, *args, **kwargs):
        known, seen = set(mesh.axis_names), set()

        def keep(entry):
            names = entry if isinstance(entry, tuple) else (entry,)
            kept = tuple(n for n in names if n in known and n not in seen and not seen.add(n))
            return None if not kept else kept if isinstance(entry, tuple) else kept[0]
        return original(mesh, type(spec)(*[keep(e) for e in spec]), *args, **kwargs)
    shd.NamedSharding = named_sharding  # (what the suites call; JAX itself keeps the class)
