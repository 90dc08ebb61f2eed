"""jax.random.key_impl of a key made with impl='unsafe_rbg' names it 'urbg' (str of the PRNGSpec it
returns), a name jax.random.key(impl=...) refuses (ValueError): on 0.4.30 to 0.4.35 (from 0.4.36
key_impl returns 'unsafe_rbg'). Exits 1 while the name is not the one asked."""
import sys
import jax

print('jax', jax.__version__)
k = jax.random.key(0, impl='unsafe_rbg')
name = str(jax.random.key_impl(k))
print('key_impl:', repr(jax.random.key_impl(k)), 'str:', name)
try:
    jax.random.key(0, impl=name)
    print('key(impl=that name) accepted')
except ValueError as e:
    print('key(impl=that name) raised ValueError:', e)
sys.exit(0 if name == 'unsafe_rbg' else 1)
