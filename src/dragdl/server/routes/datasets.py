from __future__ import annotations

import shutil
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Request, Response, status
from starlette.concurrency import run_in_threadpool

from dragdl.db.models import Dataset, new_id
from dragdl.server.deps import CurrentUser, SessionDep, SettingsDep
from dragdl.server.errors import error_responses
from dragdl.server.schemas.datasets import (
    ClassPreview,
    ClassSummary,
    DatasetDetail,
    DatasetPublic,
    DatasetsPublic,
    SequencePreview,
    SequenceSummary,
    SizeStats,
)
from dragdl.server.schemas.models import ColumnPublic
from dragdl.server.services import datasets as service
from dragdl.server.services import limits
from dragdl.server.services.cpu_pool import RETRY_AFTER_S, PoolBusy
from dragdl.server.services.uploads import UploadError, receive_multipart

router = APIRouter(prefix="/api/datasets", tags=["datasets"])

_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["files"],
                    "properties": {
                        "files": {
                            "type": "array",
                            "items": {"type": "string", "format": "binary"},
                            "description": "One .zip (class folders, or a CSV of path,label rows with "
                            "its images), one .npy bitmap file per class (file name = class), one "
                            "table: a .csv, .tsv or .parquet file, or sequences: a .ts file (or a "
                            "_TRAIN.ts/_TEST.ts pair), X.npy with y.npy or labels.csv, or a .zip of "
                            "these or of class folders of CSVs (one sequence per file).",
                        },
                        "name": {"type": "string", "maxLength": 200},
                        "label_column": {
                            "type": "string",
                            "maxLength": 200,
                            "description": "With one CSV: a recording of sensor rows (a row per time "
                            "step) to cut into windows, labelled by this column at each window's last step.",
                        },
                        "window": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 128},
                        "stride": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 64},
                    },
                }
            }
        },
    }
}


_NOT_FOUND = error_responses(404)


def _not_found(dataset_id: str) -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, f"dataset {dataset_id} not found")


def _public(row: Dataset) -> DatasetPublic:
    info = row.info
    size = info.get("size")
    stats = info.get("size_stats")
    columns = info.get("columns")
    sequence = info.get("sequence")
    return DatasetPublic(
        id=row.id,
        name=row.name,
        kind=row.kind,
        count=info["count"],
        channels=info["channels"],
        size=(size[0], size[1]) if size else None,
        size_stats=SizeStats.model_validate(stats) if stats is not None else None,
        classes=[
            ClassSummary(index=i, name=name, count=count)
            for i, (name, count) in enumerate(zip(info["classes"], info["counts"], strict=True))
        ],
        columns=[ColumnPublic.model_validate(c) for c in columns] if columns is not None else None,
        sequence=SequenceSummary.model_validate({"format": info["format"], **sequence}) if sequence else None,
        size_bytes=row.size_bytes,
        created_at=row.created_at,
        node=service.dataset_node(row),
    )


@router.post(
    "",
    operation_id="uploadDataset",
    status_code=status.HTTP_201_CREATED,
    openapi_extra=_UPLOAD_BODY,
    responses=error_responses(
        described={
            400: "An unusable upload: the message names the file, archive member, CSV row or column.",
            413: "Above the server's upload limit (all files of the request together), a table or "
            "sequence set larger than the limits for its type, or more than your dataset quota has "
            "room for (the message names the quota, your usage and the size).",
            415: "Not multipart/form-data, or a file type that is not a dataset.",
        }
    ),
)
async def upload_dataset(
    request: Request, settings: SettingsDep, db: SessionDep, user: CurrentUser
) -> DatasetPublic:
    """Upload a dataset: streamed to disk, unpacked safely, checked and described.

    A refused upload (4xx, the message names the file, member or CSV row) leaves nothing behind.
    """
    dataset_id = new_id()
    directory = service.dataset_dir(settings, dataset_id)
    share = request.app.state.cpu_pool.for_owner(user.id)  # the user's share of the pool
    try:
        await run_in_threadpool(limits.check_dataset_room, db, settings, user, None)
        share.check_room()  # before the body: a user over their share sends it for nothing
        form = await receive_multipart(
            request, directory / "incoming", settings.max_upload_bytes, service.MAX_UPLOAD_FILES
        )
        row = await run_in_threadpool(
            service.create_dataset,
            db,
            settings,
            user,
            dataset_id,
            form.files,
            form.fields.get("name"),
            share,
            {key: value for key, value in form.fields.items() if key != "name"},
        )
    except UploadError as exc:
        await run_in_threadpool(shutil.rmtree, directory, True)
        raise HTTPException(exc.status_code, exc.message) from None
    except PoolBusy as exc:
        await run_in_threadpool(shutil.rmtree, directory, True)
        raise HTTPException(503, exc.message, headers={"Retry-After": str(RETRY_AFTER_S)}) from None
    except BaseException:
        db.rollback()
        await run_in_threadpool(shutil.rmtree, directory, True)
        raise
    return _public(row)


@router.get("", operation_id="listDatasets")
def list_datasets(db: SessionDep, user: CurrentUser) -> DatasetsPublic:
    rows = service.list_datasets(db, user)
    return DatasetsPublic(data=[_public(row) for row in rows], count=len(rows))


@router.get("/{dataset_id}", operation_id="getDataset", responses=_NOT_FOUND)
def get_dataset(dataset_id: str, request: Request, db: SessionDep, user: CurrentUser) -> DatasetDetail:
    """The dataset with a few preview URLs per class (images) or a few series per class (sequences)."""
    row = service.get_dataset(db, user, dataset_id)
    if row is None:
        raise _not_found(dataset_id)
    public = _public(row)
    samples: list[list[str]] = row.info.get("samples", [])
    classes = [
        ClassPreview(
            **summary.model_dump(),
            samples=[
                str(
                    request.url_for(
                        "getDatasetThumbnail", dataset_id=row.id, class_index=summary.index, sample=i
                    ).path
                )
                for i in range(len(samples[summary.index]) if summary.index < len(samples) else 0)
            ],
        )
        for summary in public.classes
    ]
    preview = row.info.get("preview")
    series = SequencePreview.model_validate(preview) if preview is not None else None
    return DatasetDetail(**public.model_dump(exclude={"classes"}), classes=classes, series=series)


@router.get(
    "/{dataset_id}/thumbnails/{class_index}/{sample}",
    operation_id="getDatasetThumbnail",
    name="getDatasetThumbnail",
    response_class=Response,
    responses={
        200: {"content": {"image/png": {}}, "description": "a PNG of at most 128 px"},
        **_NOT_FOUND,
    },
)
def get_thumbnail(
    dataset_id: str,
    class_index: Annotated[int, Path(ge=0)],
    sample: Annotated[int, Path(ge=0)],
    settings: SettingsDep,
    db: SessionDep,
    user: CurrentUser,
) -> Response:
    row = service.get_dataset(db, user, dataset_id)
    if row is None:
        raise _not_found(dataset_id)
    png = service.thumbnail(settings, row, class_index, sample)
    if png is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND, f"dataset {dataset_id} has no sample {class_index}/{sample}"
        )
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=86400"})


@router.delete(
    "/{dataset_id}",
    operation_id="deleteDataset",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=error_responses(404, described={409: "A queued or running task of yours reads the dataset."}),
)
def delete_dataset(dataset_id: str, settings: SettingsDep, db: SessionDep, user: CurrentUser) -> Response:
    """Delete the files and the row; 409 while a queued or running task of yours reads the dataset."""
    row = service.get_dataset(db, user, dataset_id)
    if row is None:
        raise _not_found(dataset_id)
    try:
        service.delete_dataset(db, settings, row)
    except service.DatasetInUse as exc:
        raise HTTPException(
            status.HTTP_409_CONFLICT, f"dataset {dataset_id} is {exc}; stop them or wait until they finish"
        ) from None
    return Response(status_code=status.HTTP_204_NO_CONTENT)
