// A real OpenID Connect provider for Podium's login tests: panva/node-oidc-provider
// (OpenID Certified), with three static accounts (one claiming an
// e-mail it never verified) and one client for the app under test.
//
//   ISSUER_PORT=9000 REDIRECT_URI=http://127.0.0.1:8501/oauth2callback node provider.mjs
//
// Log in on its own (development) login page with the account's e-mail as the login and
// any password; then "Continue" on the consent page. It prints "ready <issuer>" once
// it listens. Never use this configuration outside tests.
import Provider from "oidc-provider";

const port = Number(process.env.ISSUER_PORT ?? 9000);
const issuer = `http://127.0.0.1:${port}`;
const redirectUri = process.env.REDIRECT_URI;
if (!redirectUri) {
  console.error("set REDIRECT_URI to the app's /oauth2callback URL");
  process.exit(2);
}

const ACCOUNTS = {
  "viewer@example.org": { name: "Vera Viewer" },
  "reviewer@example.org": { name: "Rita Reviewer" },
  // A provider account that claims the admin's address without having verified it (as
  // a provider that lets anyone register any e-mail would): Podium must refuse it.
  "claims-the-admin": { name: "Mallory", email: "boss@example.org", verified: false },
};

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.CLIENT_ID ?? "podium",
      client_secret: process.env.CLIENT_SECRET ?? "podium-test-secret",
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
  // Only the known accounts exist: any other login fails at the provider.
  async findAccount(ctx, id) {
    const account = ACCOUNTS[id];
    if (!account) return undefined;
    return {
      accountId: id,
      async claims() {
        return {
          sub: id,
          email: account.email ?? id,
          email_verified: account.verified ?? true,
          name: account.name,
        };
      },
    };
  },
  cookies: { keys: ["podium-test-cookie-key"] },
  // Put e-mail and name in the ID token itself: Streamlit's st.user reads the ID token
  // and never calls the userinfo endpoint.
  conformIdTokenClaims: false,
});

// Streamlit asks for `prompt=select_account` (a Google extension this provider does not
// define); the account is chosen on the login page anyway, so the prompt is dropped.
provider.use(async (ctx, next) => {
  if (ctx.path === "/auth" && ctx.query.prompt) {
    const query = { ...ctx.query };
    query.prompt = String(query.prompt)
      .split(" ")
      .filter((p) => p !== "select_account")
      .join(" ");
    if (!query.prompt) delete query.prompt;
    ctx.query = query;
  }
  await next();
});

provider.listen(port, "127.0.0.1", () => {
  console.log(`ready ${issuer}`);
});
