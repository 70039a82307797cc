from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, File, Form, HTTPException, Query, Request, Response, UploadFile, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from dragdl.db.models import Model
from dragdl.server.auth import authenticate
from dragdl.server.deps import CurrentUser, SessionDep, SettingsDep
from dragdl.server.errors import UNPROCESSABLE, error_responses
from dragdl.server.request_limits import MAX_PREDICT_BODY_BYTES
from dragdl.server.schemas.models import (
    MAX_PREDICT_ROWS,
    ClassScore,
    ImagePredictionPublic,
    ImageValuePublic,
    ModelPublic,
    ModelsPublic,
    PredictionsPublic,
    RowClassPrediction,
    RowPredictionsPublic,
    RowsPredictionRequest,
    RowValuePrediction,
    SamplePredictionPublic,
    SamplePredictionsPublic,
)
from dragdl.server.services import models as service
from dragdl.server.services.prediction import (
    MAX_PREDICT_SAMPLES,
    ModelUnavailable,
    PredictionInputError,
    PredictionService,
    SampleAnswer,
    ValuePrediction,
    WrongInputKind,
)
from dragdl.server.services.table_rows import MAX_CSV_BYTES, MAX_CSV_ROWS, read_csv_rows
from dragdl.server.services.uploads import UploadError, receive_multipart
from dragdl.server.settings import Settings

if TYPE_CHECKING:
    from dragdl.engine.bundle import Prediction

router = APIRouter(prefix="/api/models", tags=["models"])

MAX_PREDICT_IMAGES = 64
MAX_PREDICT_IMAGE_BYTES = 20 * 1024**2
_NOT_FOUND = error_responses(404)
_FILES = {
    409: "The model's files cannot be used (damaged, or outside the data dir).",
    410: "The model's bundle files are gone.",
}


def _not_found(model_id: str) -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, f"model {model_id} not found")


def _owned(db: SessionDep, user: CurrentUser, model_id: str) -> Model:
    row = service.get_model(db, user, model_id)
    if row is None:
        raise _not_found(model_id)
    return row


def _public(settings: Settings, row: Model) -> ModelPublic:
    public = ModelPublic.model_validate(row)
    public.exports = service.available_exports(settings, row)
    return public


def _predictor(request: Request) -> PredictionService:
    predictor: PredictionService = request.app.state.predictor
    return predictor


@router.get("", operation_id="listModels")
def list_models(
    settings: SettingsDep,
    db: SessionDep,
    user: CurrentUser,
    task_id: Annotated[str | None, Query(max_length=64, description="Only the model of this task.")] = None,
    trials: Annotated[
        bool, Query(description="Also the models of sweep trials not registered as their sweep's best.")
    ] = False,
) -> ModelsPublic:
    """Your models, newest first. A sweep's trials each leave a model; only the one registered as the
    sweep's best is listed unless `trials` is set (`hidden_trials` counts the others)."""
    rows, hidden = service.list_models(db, user, task_id=task_id, trials=trials)
    return ModelsPublic(data=[_public(settings, row) for row in rows], count=len(rows), hidden_trials=hidden)


@router.get("/{model_id}", operation_id="getModel", responses=_NOT_FOUND)
def get_model(model_id: str, settings: SettingsDep, db: SessionDep, user: CurrentUser) -> ModelPublic:
    return _public(settings, _owned(db, user, model_id))


@router.get(
    "/{model_id}/manifest", operation_id="getModelManifest", responses=error_responses(404, described=_FILES)
)
def get_manifest(model_id: str, settings: SettingsDep, db: SessionDep, user: CurrentUser) -> dict[str, Any]:
    """The bundle's model.json: classes, input spec, the `preprocessing` a browser follows, metrics,
    exports (what a client needs to run the ONNX export itself)."""
    row = _owned(db, user, model_id)
    try:
        return service.manifest(settings, row)
    except service.ModelFilesError as exc:
        raise HTTPException(exc.status_code, exc.message) from None


@router.delete(
    "/{model_id}", operation_id="deleteModel", status_code=status.HTTP_204_NO_CONTENT, responses=_NOT_FOUND
)
def delete_model(
    model_id: str, request: Request, settings: SettingsDep, db: SessionDep, user: CurrentUser
) -> Response:
    """Delete the model. A task's artifacts stay with the task; a model without a task loses its folder."""
    row = _owned(db, user, model_id)
    service.delete_model(db, settings, row)
    _predictor(request).evict(model_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


class _CallerFirst(APIRoute):
    """Resolves the caller and their model before FastAPI reads the multipart body.

    FastAPI parses (and spools to disk) a route's `File`/`Form` parameters before any dependency runs,
    so an anonymous client could make the server store a large body only to be told 401. This route
    class runs `_caller_model_folder` first and hands its answer to the endpoint in `request.state`.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        parse_and_run = super().get_route_handler()

        async def handler(request: Request) -> Response:
            settings: Settings = request.app.state.settings
            model_id: str = request.path_params["model_id"]
            request.state.model_folder = await run_in_threadpool(
                _caller_model_folder, request, settings, model_id
            )
            return await parse_and_run(request)

        return handler


async def predict(
    model_id: str,
    request: Request,
    images: Annotated[
        list[UploadFile] | None, File(description="One or more images (PNG, JPEG, ...), for an image model.")
    ] = None,
    files: Annotated[
        list[UploadFile] | None,
        File(
            description="One or more files of the model's input type (a sequence model: .ts, .csv, .tsv "
            "or .npy, each holding one or more sequences); images may be sent here too."
        ),
    ] = None,
    top_k: Annotated[int, Form(ge=1, le=1000, description="Classes listed per image.")] = 5,
    invert: Annotated[
        Literal["auto", "yes", "no"],
        Form(
            description="auto: invert an image whose paper (light or dark border) is the opposite of the "
            "training images'; yes, no: invert every image, or none."
        ),
    ] = "auto",
) -> PredictionsPublic | SamplePredictionsPublic:
    """Predict with the model, using the evaluation transforms it was trained with. An image model
    answers per image (`images`): ranked classes for a classifier, a `value` for a regression model.
    A model whose input type reads files of samples (sequences: `.ts`, `.csv`, `.npy` in `files`)
    answers per sample of each file, with the file's name and the sample's position in it."""
    folder: Path = request.state.model_folder  # see _CallerFirst: resolved before the body was read
    if images and files:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, "send the files as 'images' or as 'files', not both")
    uploads = images or files or []
    if not uploads:  # what FastAPI answered when `images` was the one required field
        raise HTTPException(422, "send the files to predict in the form field 'images' or 'files'")
    if len(uploads) > MAX_PREDICT_IMAGES:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"send 1 to {MAX_PREDICT_IMAGES} files")
    payload = []
    for index, upload in enumerate(uploads):
        name = upload.filename or f"file {index + 1}"
        if upload.size is not None and upload.size > MAX_PREDICT_IMAGE_BYTES:
            raise HTTPException(
                413,
                f"{name}: {upload.size} bytes is above the limit of {MAX_PREDICT_IMAGE_BYTES}",
            )
        payload.append((name, await upload.read()))
    predictor = _predictor(request)
    try:
        forced = {"auto": None, "yes": True, "no": False}[invert]
        found = await predictor.predict_files(model_id, folder, payload, top_k, forced)
    except PredictionInputError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, exc.message) from None
    except ModelUnavailable as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, f"model {model_id}: {exc.message}") from None
    except WrongInputKind as exc:
        raise HTTPException(422, f"model {model_id}: {exc.message}") from None
    samples = [r for r in found.predictions if isinstance(r, SampleAnswer)]
    if samples:
        return SamplePredictionsPublic(
            model_id=model_id,
            task=found.task,
            classes=found.classes,
            batched=predictor.batching,
            predictions=[
                SamplePredictionPublic(
                    filename=r.filename, sample=r.sample, answer=r.answer, summary=r.summary
                )
                for r in samples
            ],
        )
    results = [r for r in found.predictions if not isinstance(r, SampleAnswer)]
    return PredictionsPublic(
        model_id=model_id,
        classes=found.classes,
        batched=predictor.batching,
        predictions=[_image_answer(name, r) for (name, _), r in zip(payload, results, strict=True)],
    )


def _image_answer(name: str, r: Prediction | ValuePrediction) -> ImagePredictionPublic | ImageValuePublic:
    if isinstance(r, ValuePrediction):
        return ImageValuePublic(filename=name, value=r.value, inverted=r.inverted)
    return ImagePredictionPublic(
        filename=name,
        label=r.label,
        index=r.index,
        probability=r.probability,
        top_k=[ClassScore(label=score.label, probability=score.probability) for score in r.top_k],
        probabilities=r.probabilities,
        inverted=r.inverted,
    )


router.add_api_route(
    "/{model_id}/predict",
    predict,
    methods=["POST"],
    operation_id="predict",
    route_class_override=_CallerFirst,
    form_limits={"max_files": MAX_PREDICT_IMAGES, "max_fields": 4, "max_part_size": 1024},
    responses={
        **error_responses(
            404,
            described={
                400: "An upload is not a usable image or sample file (the message names the file, and "
                "the line of a sequence file), the files hold more than "
                f"{MAX_PREDICT_SAMPLES} samples, or the number of files is out of range.",
                413: f"A file is larger than {MAX_PREDICT_IMAGE_BYTES} bytes, or the request is larger "
                f"than {MAX_PREDICT_BODY_BYTES} bytes.",
                **_FILES,
            },
        ),
        422: {
            **UNPROCESSABLE[422],
            "description": "The form does not match the parameters, or the model takes table rows "
            "(see /predict/rows), not images.",
        },
    },
)


_ROWS_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": RowsPredictionRequest.model_json_schema()},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {
                            "type": "string",
                            "format": "binary",
                            "description": "A CSV (or .tsv) file whose header names the model's input "
                            f"columns; up to {MAX_CSV_ROWS} rows and {MAX_CSV_BYTES} bytes.",
                        }
                    },
                }
            },
        },
    }
}


@router.post(
    "/{model_id}/predict/rows",
    operation_id="predictRows",
    openapi_extra=_ROWS_BODY,
    responses={
        **error_responses(
            404,
            described={
                400: "A value cannot be used: the message names the row (1-based) and column, or the "
                "uploaded file.",
                413: f"The request is larger than {MAX_CSV_BYTES} bytes (with the multipart envelope).",
                415: "Neither application/json nor multipart/form-data.",
                **_FILES,
            },
        ),
        422: {
            **UNPROCESSABLE[422],
            "description": f"The body is not {{'rows': [...]}} with 1 to {MAX_PREDICT_ROWS} rows, or the "
            "model takes images, not rows.",
        },
    },
)
async def predict_rows(
    model_id: str,
    request: Request,
    top_k: Annotated[int, Query(ge=1, le=1000, description="Classes listed per row (classifiers).")] = 5,
) -> RowPredictionsPublic:
    """Predict rows of a table with a table model: JSON `{"rows": [{column: value}, ...]}` (at most
    1000 rows), or a CSV upload in the multipart field `file`. Rows are counted from 1 (in a file,
    after the header). A classifier answers class scores per row, a regression model a `value`."""
    settings: Settings = request.app.state.settings
    predictor = _predictor(request)
    # Who calls and which model, before a byte of the body is read (see _CallerFirst).
    folder = await run_in_threadpool(_caller_model_folder, request, settings, model_id)
    try:
        model = await run_in_threadpool(predictor.table_model, model_id, folder)
        rows, where = await _read_rows(request, model.columns)
        model, answers = await predictor.predict_rows(model_id, folder, rows, top_k, where)
    except WrongInputKind as exc:
        raise HTTPException(422, f"model {model_id}: {exc.message}") from None
    except PredictionInputError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, exc.message) from None
    except ModelUnavailable as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, f"model {model_id}: {exc.message}") from None
    return RowPredictionsPublic(
        model_id=model_id,
        task=model.task,
        target=model.target,
        classes=model.classes,
        predictions=[_row_answer(model.task, answer) for answer in answers],
    )


async def _read_rows(request: Request, columns: list[str]) -> tuple[list[dict[str, Any]], str]:
    """The rows of the request body and how errors name their source ("" for JSON, "file: ")."""
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type == "application/json":
        raw = await request.body()  # at most Settings.max_body_bytes (request_limits)
        return await run_in_threadpool(_json_rows, raw), ""
    if content_type == "multipart/form-data":
        with tempfile.TemporaryDirectory(prefix="dragdl-rows-") as scratch:
            try:
                form = await receive_multipart(request, Path(scratch), MAX_CSV_BYTES, 1)
            except UploadError as exc:
                raise HTTPException(exc.status_code, exc.message) from None
            upload = next((f for f in form.files), None)
            if upload is None or set(form.fields) - {"file"}:
                raise HTTPException(status.HTTP_400_BAD_REQUEST, "send one CSV file in the form field 'file'")
            name = upload.filename or "the upload"
            data = await run_in_threadpool(upload.path.read_bytes)
        rows = await run_in_threadpool(read_csv_rows, data, name, columns)
        return list(rows), f"{name}: "
    raise HTTPException(
        status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
        "send the rows as application/json ({'rows': [...]}) or a CSV file as multipart/form-data ('file')",
    )


def _json_rows(raw: bytes) -> list[dict[str, Any]]:
    """The rows of a JSON body, in a thread. More than MAX_PREDICT_ROWS rows are refused from a plain
    parse before Pydantic validates each of them (issue 23 review: millions of `{}` rows took seconds
    to validate, and the refusal quoted them all)."""
    try:
        rows = json.loads(raw).get("rows")
    except (ValueError, AttributeError):
        rows = None  # Pydantic names what is wrong
    if isinstance(rows, list) and len(rows) > MAX_PREDICT_ROWS:
        raise RequestValidationError(
            [
                {
                    "type": "too_long",
                    "loc": ("body", "rows"),
                    "msg": f"List should have at most {MAX_PREDICT_ROWS} items, not {len(rows)}",
                }
            ],
            body=None,
        )
    try:
        body = RowsPredictionRequest.model_validate_json(raw)
    except ValidationError as exc:
        raise RequestValidationError(exc.errors(include_url=False), body=None) from None
    return [dict(row) for row in body.rows]


def _row_answer(task: str, answer: dict[str, Any]) -> RowClassPrediction | RowValuePrediction:
    from dragdl.engine.tasks.registry import get_task_kind

    if get_task_kind(task).ranks_classes:
        return RowClassPrediction.model_validate(answer)
    return RowValuePrediction.model_validate(answer)


def _caller_model_folder(request: Request, settings: Settings, model_id: str) -> Path:
    """Who is calling, and the bundle folder of their model.

    Prediction is the hot path of serving, so it skips the SessionDep/CurrentUser dependencies: each
    of those is a trip to the thread pool, and together they cost more than a small model's forward
    pass. This is one trip and one database session for the same checks.
    """
    with request.app.state.sessions() as db:
        user = authenticate(request, db, settings)
        row = _owned(db, user, model_id)
        try:
            return service.bundle_folder(settings, row)
        except service.ModelFilesError as exc:
            raise HTTPException(exc.status_code, exc.message) from None


@router.get(
    "/{model_id}/download",
    operation_id="downloadModel",
    response_class=Response,
    responses={
        200: {"content": {"application/zip": {}, "application/octet-stream": {}, "text/x-python": {}}},
        **error_responses(404, described=_FILES),
        422: {**UNPROCESSABLE[422], "description": "The model cannot be converted to this format."},
    },
)
def download_model(
    model_id: str,
    settings: SettingsDep,
    db: SessionDep,
    user: CurrentUser,
    format: Annotated[
        service.DownloadFormat, Query(description="bundle | onnx | torchscript | script")
    ] = "bundle",
) -> Response:
    """The bundle (zip of model.json + model.safetensors), an ONNX or TorchScript export (made on first
    request, then kept), or the standalone training script."""
    row = _owned(db, user, model_id)
    try:
        if format == "bundle":
            path = service.bundle_zip(settings, row)
            return FileResponse(
                path,
                media_type="application/zip",
                filename=service.download_name(row, ".zip"),
                background=BackgroundTask(path.unlink, missing_ok=True),
            )
        if format == "script":
            script = service.training_script(db, settings, row)
            disposition = f'attachment; filename="{service.download_name(row, ".py")}"'
            return Response(script, media_type="text/x-python", headers={"Content-Disposition": disposition})
        path = service.export_file(settings, row, format)
        suffix = ".onnx" if format == "onnx" else ".torchscript.pt"
        return FileResponse(
            path, media_type="application/octet-stream", filename=service.download_name(row, suffix)
        )
    except service.ModelFilesError as exc:
        raise HTTPException(exc.status_code, exc.message) from None
