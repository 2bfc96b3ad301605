"""Numerical building blocks of the analytic core, independent of the schemes.

``quadrature``    Gauss–Legendre pieces and the power-law tail beyond the last breakpoint
``lattice``       laws on lattices, FFT convolution powers, the Richardson-and-bracket driver
``superposition`` E[T] of k-batch-sync: K-th point of m superposed renewal processes
``maxsum``        E[max_i S_i] of local SGD: the slowest of m sums of H delays
"""
