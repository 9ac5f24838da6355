//! Server-side extension tools (`extensions_list`, `extensions_apply`, `extensions_prompt`),
//! present only when `[extensions] dir` is configured. Definitions and behaviour come from
//! `aeterna_bridge::tools`, the same code the bridge serves; here each route only supplies the
//! caller's tenant, so extension state is kept per tenant, session and extension.

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::ErrorData;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::CallToolResponse;

use super::AeternaMcp;
use crate::auth::Principal;

/// The extension tools' routes, if the server runs extensions.
pub(crate) fn extensions_router(state: &crate::state::AppState) -> ToolRouter<AeternaMcp> {
    let mut router = ToolRouter::new();
    if state.extensions.is_none() {
        return router;
    }
    for tool in aeterna_bridge::tools::definitions() {
        router.add_route(ToolRoute::new_dyn(tool, route));
    }
    router
}

fn route(
    context: ToolCallContext<'_, AeternaMcp>,
) -> BoxFuture<'_, Result<CallToolResponse, ErrorData>> {
    call(context).boxed()
}

async fn call(context: ToolCallContext<'_, AeternaMcp>) -> Result<CallToolResponse, ErrorData> {
    let service = context.service;
    let Some(extensions) = &service.state().extensions else {
        return Err(ErrorData::internal_error(
            "extension tools are routed but no extensions are configured",
            None,
        ));
    };
    let principal = context
        .request_context
        .extensions
        .get::<Principal>()
        .cloned()
        .ok_or_else(|| {
            ErrorData::internal_error("the tool call has no authenticated caller", None)
        })?;
    let result = aeterna_bridge::tools::call(
        &extensions.extensions,
        &principal.tenant_id,
        &context.name,
        context.arguments,
    )
    .await
    .unwrap_or_else(|| {
        aeterna_bridge::tools::error_result(format!("unknown extension tool `{}`", context.name))
    });
    Ok(result.into())
}
