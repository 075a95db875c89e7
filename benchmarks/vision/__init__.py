"""The labelled evaluation set of bench_vision.py, made by code from fonts and sample photos that
registry packages ship. Each module here covers some validators: it names them in `VALIDATORS`
and yields `Case`s from `cases(workdir)` (workdir: a scratch folder for anything it must fetch
or render once)."""
