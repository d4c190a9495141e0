// /docs (app/web/docs.py): start Swagger UI with the settings the server put in data-config.
// The presets are functions, so they are named here rather than sent as JSON.
"use strict";
(function () {
  var root = document.getElementById("swagger-ui");
  var config = JSON.parse(root.getAttribute("data-config"));
  config.presets = [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset];
  window.ui = SwaggerUIBundle(config);
})();
