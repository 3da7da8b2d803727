"""Interoperability with other differential-privacy libraries (optional dependencies).

:mod:`mipdp.interop.opendp`: :func:`~mipdp.interop.opendp.make_private_bss` returns an
OpenDP ``Measurement`` (``pip install mipdp[opendp]``).  Nothing here is imported by
``import mipdp``.
"""
