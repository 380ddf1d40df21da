//! The associative memory's routes (`/memories…`), one method per operation.

use reqwest::Method;
use serde_json::Value;

use super::{Client, ClientError, path_segment};
use crate::memory::{
    MemoryEventRequest, MemoryEventResponse, MemoryForgetRequest, MemoryForgetResponse,
    MemoryRecallRequest, MemoryRecallResponse, MemoryRenderRequest, MemoryRenderResponse,
    MemorySourcesRequest, MemorySourcesResponse, MemorySourcesRunRequest, MemoryStoreRequest,
    MemoryStoreResponse,
};

/// The memory operations of a [`Client`] ([`Client::memories`]). Cheap: a reference.
#[derive(Debug, Clone, Copy)]
pub struct Memories<'a> {
    pub(super) client: &'a Client,
}

impl Memories<'_> {
    /// `memory_store`: `POST /memories`.
    pub async fn store(
        &self,
        req: &MemoryStoreRequest,
    ) -> Result<MemoryStoreResponse, ClientError> {
        self.client.post("/memories", req).await
    }

    /// `memory_recall`: `POST /memories/recall`.
    pub async fn recall(
        &self,
        req: &MemoryRecallRequest,
    ) -> Result<MemoryRecallResponse, ClientError> {
        self.client.post("/memories/recall", req).await
    }

    /// `memory_forget`: `POST /memories/forget`.
    pub async fn forget(
        &self,
        req: &MemoryForgetRequest,
    ) -> Result<MemoryForgetResponse, ClientError> {
        self.client.post("/memories/forget", req).await
    }

    /// `memory_render`: `POST /memories/render`.
    pub async fn render(
        &self,
        req: &MemoryRenderRequest,
    ) -> Result<MemoryRenderResponse, ClientError> {
        self.client.post("/memories/render", req).await
    }

    /// `memory_sources`: `POST /memories/sources`.
    pub async fn sources(
        &self,
        req: &MemorySourcesRequest,
    ) -> Result<MemorySourcesResponse, ClientError> {
        self.client.post("/memories/sources", req).await
    }

    /// `memory_sources_run`: `POST /memories/sources/run`.
    pub async fn sources_run(
        &self,
        req: &MemorySourcesRunRequest,
    ) -> Result<MemorySourcesResponse, ClientError> {
        self.client.post("/memories/sources/run", req).await
    }

    /// `memory_event`: `POST /memories/events`.
    pub async fn event(
        &self,
        req: &MemoryEventRequest,
    ) -> Result<MemoryEventResponse, ClientError> {
        self.client.post("/memories/events", req).await
    }

    /// Ends a session: `DELETE /memories/sessions/{id}` removes its non-persistent memories.
    pub async fn end_session(&self, id: &str) -> Result<Value, ClientError> {
        self.client
            .send(self.client.request(
                Method::DELETE,
                &format!("/memories/sessions/{}", path_segment(id)),
            ))
            .await
    }
}
