//! The capsule memory's routes (`/capsules…`), one method per operation.

use reqwest::Method;
use serde::Serialize;

use super::{Client, ClientError, path_segment, with_progress};
use crate::capsule::{
    AppendRequest, AppendResponse, BulkDeleteRequest, BulkDeleteResponse, BulkUpdateRequest,
    BulkUpdateResponse, Capsule, CapsuleHandle, CapsulePage, ComposeRequest, ComposeResponse,
    DeleteRequest, DeleteResponse, ExportRequest, ExportResponse, FetchManyRequest,
    FetchManyResponse, FetchRequest, ImportRequest, ImportResponse, InventoryRequest,
    LatestRequest, LatestResponse, ListRequest, PurgeRequest, PurgeResponse, SearchPage,
    SearchRequest, StatsRequest, StatsResponse, StoreRequest, UpdateRequest, WatchRequest,
    WatchResponse,
};
use crate::capsule::{
    CloneRequest, DiffRequest, DiffResponse, LineageRequest, LineageResponse, RestoreRequest,
    RestoreResponse, VersionsRequest, VersionsResponse,
};

/// The capsule operations of a [`Client`] ([`Client::capsules`]). Cheap: a reference.
#[derive(Debug, Clone, Copy)]
pub struct Capsules<'a> {
    pub(super) client: &'a Client,
}

impl Capsules<'_> {
    /// `capsule_store`: `POST /capsules`.
    pub async fn store(&self, req: &StoreRequest) -> Result<CapsuleHandle, ClientError> {
        self.client
            .send(self.client.request(Method::POST, "/capsules").json(req))
            .await
    }

    /// `capsule_fetch`: `GET /capsules/{id}` or `GET /capsules/by-name`.
    pub async fn fetch(&self, req: &FetchRequest) -> Result<Capsule, ClientError> {
        let rb = match &req.id {
            Some(id) => {
                let rest = FetchRequest {
                    id: None,
                    ..req.clone()
                };
                self.client
                    .request(Method::GET, &format!("/capsules/{}", path_segment(id)))
                    .query(&rest)
            }
            None => self
                .client
                .request(Method::GET, "/capsules/by-name")
                .query(req),
        };
        self.client.send(rb).await
    }

    /// `capsule_fetch_many`: `POST /capsules/fetch-many`.
    pub async fn fetch_many(
        &self,
        req: &FetchManyRequest,
    ) -> Result<FetchManyResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::POST, "/capsules/fetch-many")
                    .json(req),
            )
            .await
    }

    /// `capsule_update`: `PUT /capsules/{id}` or `PUT /capsules/by-name`.
    pub async fn update(&self, req: &UpdateRequest) -> Result<CapsuleHandle, ClientError> {
        let rb = match &req.id {
            Some(id) => {
                let body = UpdateRequest {
                    id: None,
                    ..req.clone()
                };
                self.client
                    .request(Method::PUT, &format!("/capsules/{}", path_segment(id)))
                    .json(&body)
            }
            None => {
                let addr = NameQuery {
                    workspace: req.workspace.clone(),
                    name: req.name.clone(),
                };
                let body = UpdateRequest {
                    workspace: None,
                    name: None,
                    ..req.clone()
                };
                self.client
                    .request(Method::PUT, "/capsules/by-name")
                    .query(&addr)
                    .json(&body)
            }
        };
        self.client.send(rb).await
    }

    /// `capsule_delete`: `DELETE /capsules/{id}` or `DELETE /capsules/by-name`.
    pub async fn delete(&self, req: &DeleteRequest) -> Result<DeleteResponse, ClientError> {
        let rb = match &req.id {
            Some(id) => {
                let rest = DeleteRequest {
                    id: None,
                    ..req.clone()
                };
                self.client
                    .request(Method::DELETE, &format!("/capsules/{}", path_segment(id)))
                    .query(&rest)
            }
            None => self
                .client
                .request(Method::DELETE, "/capsules/by-name")
                .query(req),
        };
        self.client.send(rb).await
    }

    /// `capsule_latest`: `GET /capsules/latest`.
    pub async fn latest(&self, req: &LatestRequest) -> Result<LatestResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::GET, "/capsules/latest")
                    .query(req),
            )
            .await
    }

    /// `capsule_list`: `GET /capsules`.
    pub async fn list(&self, req: &ListRequest) -> Result<CapsulePage, ClientError> {
        self.client
            .send(self.client.request(Method::GET, "/capsules").query(req))
            .await
    }

    /// `capsule_inventory`: `GET /capsules/inventory`.
    pub async fn inventory(&self, req: &InventoryRequest) -> Result<CapsulePage, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::GET, "/capsules/inventory")
                    .query(req),
            )
            .await
    }

    /// `capsule_search`: `GET /capsules/search`.
    pub async fn search(&self, req: &SearchRequest) -> Result<SearchPage, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::GET, "/capsules/search")
                    .query(req),
            )
            .await
    }

    /// `capsule_compose`: `POST /capsules/compose`.
    pub async fn compose(&self, req: &ComposeRequest) -> Result<ComposeResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::POST, "/capsules/compose")
                    .json(req),
            )
            .await
    }

    /// `capsule_append`: `POST /capsules/append`.
    pub async fn append(&self, req: &AppendRequest) -> Result<AppendResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::POST, "/capsules/append")
                    .json(req),
            )
            .await
    }

    /// `capsule_bulk_delete`: `POST /capsules/bulk-delete`.
    pub async fn bulk_delete(
        &self,
        req: &BulkDeleteRequest,
    ) -> Result<BulkDeleteResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::POST, "/capsules/bulk-delete")
                    .json(req),
            )
            .await
    }

    /// `capsule_bulk_update`: `POST /capsules/bulk-update`.
    pub async fn bulk_update(
        &self,
        req: &BulkUpdateRequest,
    ) -> Result<BulkUpdateResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::POST, "/capsules/bulk-update")
                    .json(req),
            )
            .await
    }

    /// `capsule_purge`: `POST /capsules/purge`.
    pub async fn purge(&self, req: &PurgeRequest) -> Result<PurgeResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::POST, "/capsules/purge")
                    .json(req),
            )
            .await
    }

    /// `capsule_watch`: `GET /capsules/watch`, a long poll of up to `timeout_ms`.
    pub async fn watch(&self, req: &WatchRequest) -> Result<WatchResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::GET, "/capsules/watch")
                    .query(req),
            )
            .await
    }

    /// `capsule_restore`: `POST /capsules/restore`.
    pub async fn restore(&self, req: &RestoreRequest) -> Result<RestoreResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::POST, "/capsules/restore")
                    .json(req),
            )
            .await
    }

    /// `capsule_lineage`: `GET /capsules/lineage`.
    pub async fn lineage(&self, req: &LineageRequest) -> Result<LineageResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::GET, "/capsules/lineage")
                    .query(req),
            )
            .await
    }

    /// `capsule_clone`: `POST /capsules/clone`.
    pub async fn clone_capsule(&self, req: &CloneRequest) -> Result<CapsuleHandle, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::POST, "/capsules/clone")
                    .json(req),
            )
            .await
    }

    /// `capsule_versions`: `GET /capsules/versions`.
    pub async fn versions(&self, req: &VersionsRequest) -> Result<VersionsResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::GET, "/capsules/versions")
                    .query(req),
            )
            .await
    }

    /// `capsule_diff`: `POST /capsules/diff`.
    pub async fn diff(&self, req: &DiffRequest) -> Result<DiffResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::POST, "/capsules/diff")
                    .json(req),
            )
            .await
    }

    /// `capsule_stats`: `GET /capsules/stats`.
    pub async fn stats(&self, req: &StatsRequest) -> Result<StatsResponse, ClientError> {
        self.client
            .send(
                self.client
                    .request(Method::GET, "/capsules/stats")
                    .query(req),
            )
            .await
    }

    /// `capsule_export`: `POST /capsules/export`. With `progress`, the daemon publishes how far
    /// it has got under that id ([`Client::progress`](crate::Client::progress)).
    pub async fn export(
        &self,
        req: &ExportRequest,
        progress: Option<&str>,
    ) -> Result<ExportResponse, ClientError> {
        let rb = self
            .client
            .request(Method::POST, "/capsules/export")
            .json(req);
        self.client.send(with_progress(rb, progress)).await
    }

    /// `capsule_import`: `POST /capsules/import`. With `progress`, as for [`Capsules::export`].
    pub async fn import(
        &self,
        req: &ImportRequest,
        progress: Option<&str>,
    ) -> Result<ImportResponse, ClientError> {
        let rb = self
            .client
            .request(Method::POST, "/capsules/import")
            .json(req);
        self.client.send(with_progress(rb, progress)).await
    }
}

#[derive(Serialize)]
struct NameQuery {
    #[serde(skip_serializing_if = "Option::is_none")]
    workspace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
}
