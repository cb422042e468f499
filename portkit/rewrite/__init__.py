"""Mapping-driven rewriters: each turns captured nodes into byte-range edits (and notes).

identifiers.py  CUDA names in code (functions, types, enums, macros, namespaces), symbol and
                dropped-argument call fixes
includes.py     #include lines, duplicate removal, the inserted hip/hip_runtime.h
launches.py     <<<...>>> -> hipLaunchKernelGGL(...) on request
macros.py       macro bodies: re-parsed on their own so the same rewriters apply inside them
codes.py        the codes of the notes the converter raises (PK0xx)
"""
