//! The capsule memory's handle. Most methods come from [`crate::capsule::OPS`]; the ones written
//! here pick their route from the request (a capsule by id or by name) or send a progress id.

use reqwest::Method;
use serde::Serialize;

use super::{Client, ClientError, path_segment, with_progress};
use crate::capsule::{
    Capsule, CapsuleHandle, DeleteRequest, DeleteResponse, ExportRequest, ExportResponse,
    FetchRequest, ImportRequest, ImportResponse, UpdateRequest,
};

/// The capsule operations of a [`Client`] ([`Client::capsules`]). Cheap: a reference.
#[derive(Debug, Clone, Copy)]
pub struct Capsules<'a> {
    pub(crate) client: &'a Client,
}

impl Capsules<'_> {
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
