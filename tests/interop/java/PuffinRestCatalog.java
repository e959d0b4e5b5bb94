// An Iceberg REST catalog server for the tests: Iceberg Java's own REST handlers
// (CatalogHandlers, the protocol's request and response classes and their JSON mapper, all in
// the iceberg-spark-runtime jar) served by the JDK's HTTP server on a free loopback port, over a
// catalog built on Iceberg's metastore base classes (BaseMetastoreCatalog and its table
// operations: metadata files written by Iceberg, commits swapped atomically) that keeps the
// current metadata location of each table in memory. Table files live in a local warehouse.
// (Iceberg's InMemoryCatalog keeps its files in memory too, and its JdbcCatalog's SQL does not
// run on the one embedded database at hand, Derby.)
//
// Usage: PuffinRestCatalog WAREHOUSE_DIR [KEY=VALUE...]
// Prints "PORT <n>" once it listens. Every KEY=VALUE is added to each loadTable response's
// config, as a catalog vending FileIO properties (credentials, endpoints) would.
//
// Declared in Iceberg's REST package to use its (package-private) RESTObjectMapper, the mapper
// Iceberg's own REST client and test servlet use.
package org.apache.iceberg.rest;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import org.apache.iceberg.BaseMetastoreCatalog;
import org.apache.iceberg.BaseMetastoreTableOperations;
import org.apache.iceberg.Files;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.ErrorResponseParser;
import org.apache.iceberg.rest.responses.LoadTableResponse;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;

public class PuffinRestCatalog {
  /** Local files through Iceberg's own local InputFile/OutputFile (no Hadoop needed). */
  public static class LocalFileIO implements FileIO {
    private static File file(String location) {
      return location.startsWith("file:") ? new File(URI.create(location)) : new File(location);
    }

    @Override
    public InputFile newInputFile(String location) {
      return Files.localInput(file(location));
    }

    @Override
    public OutputFile newOutputFile(String location) {
      return Files.localOutput(file(location));
    }

    @Override
    public void deleteFile(String location) {
      file(location).delete();
    }
  }

  /** Tables and namespaces in memory, table files through {@link LocalFileIO}. */
  static class LocalCatalog extends BaseMetastoreCatalog implements SupportsNamespaces {
    private final String warehouse;
    private final FileIO io = new LocalFileIO();
    private final Map<TableIdentifier, String> tables = new ConcurrentHashMap<>();
    private final Map<Namespace, Map<String, String>> namespaces = new ConcurrentHashMap<>();

    LocalCatalog(String warehouse) {
      this.warehouse = warehouse;
    }

    @Override
    public String name() {
      return "puffin-rest";
    }

    @Override
    protected TableOperations newTableOps(TableIdentifier id) {
      return new Operations(id);
    }

    @Override
    protected String defaultWarehouseLocation(TableIdentifier id) {
      return warehouse + "/" + String.join("/", id.namespace().levels()) + "/" + id.name();
    }

    private void requireNamespace(Namespace ns) {
      if (!namespaces.containsKey(ns)) {
        throw new NoSuchNamespaceException("Namespace does not exist: %s", ns);
      }
    }

    @Override
    public List<TableIdentifier> listTables(Namespace ns) {
      requireNamespace(ns);
      return tables.keySet().stream()
          .filter(id -> id.namespace().equals(ns))
          .sorted((a, b) -> a.toString().compareTo(b.toString()))
          .collect(Collectors.toList());
    }

    @Override
    public boolean dropTable(TableIdentifier id, boolean purge) {
      return tables.remove(id) != null;
    }

    @Override
    public void renameTable(TableIdentifier from, TableIdentifier to) {
      synchronized (tables) {
        requireNamespace(to.namespace());
        if (tables.containsKey(to)) {
          throw new AlreadyExistsException("Table already exists: %s", to);
        }
        String location = tables.remove(from);
        if (location == null) {
          throw new NoSuchTableException("Table does not exist: %s", from);
        }
        tables.put(to, location);
      }
    }

    @Override
    public void createNamespace(Namespace ns, Map<String, String> metadata) {
      if (namespaces.putIfAbsent(ns, new HashMap<>(metadata)) != null) {
        throw new AlreadyExistsException("Namespace already exists: %s", ns);
      }
    }

    @Override
    public List<Namespace> listNamespaces(Namespace parent) {
      if (!parent.isEmpty()) {
        requireNamespace(parent);
      }
      int depth = parent.levels().length;
      return namespaces.keySet().stream()
          .filter(ns -> ns.levels().length == depth + 1)
          .filter(ns -> java.util.Arrays.equals(
              java.util.Arrays.copyOf(ns.levels(), depth), parent.levels()))
          .sorted((a, b) -> a.toString().compareTo(b.toString()))
          .collect(Collectors.toList());
    }

    @Override
    public Map<String, String> loadNamespaceMetadata(Namespace ns) {
      requireNamespace(ns);
      return new HashMap<>(namespaces.get(ns));
    }

    @Override
    public boolean dropNamespace(Namespace ns) {
      if (tables.keySet().stream().anyMatch(id -> id.namespace().equals(ns))) {
        throw new NamespaceNotEmptyException("Namespace %s is not empty", ns);
      }
      return namespaces.remove(ns) != null;
    }

    @Override
    public boolean setProperties(Namespace ns, Map<String, String> properties) {
      requireNamespace(ns);
      namespaces.get(ns).putAll(properties);
      return true;
    }

    @Override
    public boolean removeProperties(Namespace ns, Set<String> properties) {
      requireNamespace(ns);
      namespaces.get(ns).keySet().removeAll(properties);
      return true;
    }

    /** A table's operations: the current metadata location is swapped only from the one the
     * commit started from, so a concurrent commit makes the later one fail (and be retried). */
    class Operations extends BaseMetastoreTableOperations {
      private final TableIdentifier id;

      Operations(TableIdentifier id) {
        this.id = id;
      }

      @Override
      protected String tableName() {
        return id.toString();
      }

      @Override
      public FileIO io() {
        return io;
      }

      @Override
      protected void doRefresh() {
        refreshFromMetadataLocation(tables.get(id));
      }

      @Override
      protected void doCommit(TableMetadata base, TableMetadata metadata) {
        String location = writeNewMetadataIfRequired(base == null, metadata);
        String expected = base == null ? null : base.metadataFileLocation();
        synchronized (tables) {
          if (base == null) {
            requireNamespace(id.namespace());
          }
          if (!Objects.equals(tables.get(id), expected)) {
            if (base == null) {
              throw new AlreadyExistsException("Table already exists: %s", id);
            }
            throw new CommitFailedException("Cannot commit %s: its metadata changed", id);
          }
          tables.put(id, location);
        }
      }
    }
  }

  private final LocalCatalog catalog;
  private final ObjectMapper mapper = RESTObjectMapper.mapper();
  private final Map<String, String> vended;

  PuffinRestCatalog(String warehouse, Map<String, String> vended) {
    this.catalog = new LocalCatalog(new File(warehouse).toURI().toString().replaceAll("/$", ""));
    this.vended = vended;
  }

  public static void main(String[] args) throws IOException {
    Map<String, String> vended = new HashMap<>();
    for (int i = 1; i < args.length; i++) {
      String[] pair = args[i].split("=", 2);
      vended.put(pair[0], pair[1]);
    }
    PuffinRestCatalog handlers = new PuffinRestCatalog(args[0], vended);
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", handlers::handle);
    server.setExecutor(Executors.newFixedThreadPool(8));
    server.start();
    System.out.println("PORT " + server.getAddress().getPort());
    System.out.flush();
  }

  private void handle(HttpExchange exchange) throws IOException {
    int status = 200;
    Object body;
    try {
      body = route(exchange);
      if (body == null) {
        status = 204;
      }
    } catch (NoSuchNamespaceException | NoSuchTableException e) {
      status = 404;
      body = error(status, e);
    } catch (AlreadyExistsException | CommitFailedException | NamespaceNotEmptyException e) {
      status = 409;
      body = error(status, e);
    } catch (ValidationException | IllegalArgumentException e) {
      status = 400;
      body = error(status, e);
    } catch (UnsupportedOperationException e) {
      status = 406;
      body = error(status, e);
    } catch (RuntimeException e) {
      status = 500;
      body = error(status, e);
    }
    byte[] out = new byte[0];
    if (body instanceof ErrorResponse) {
      out = ErrorResponseParser.toJson((ErrorResponse) body).getBytes(StandardCharsets.UTF_8);
    } else if (body != null) {
      out = mapper.writeValueAsBytes(body);
    }
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    boolean empty = status == 204 || "HEAD".equals(exchange.getRequestMethod());
    exchange.sendResponseHeaders(status, empty ? -1 : out.length);
    if (!empty) {
      try (OutputStream stream = exchange.getResponseBody()) {
        stream.write(out);
      }
    }
    exchange.close();
  }

  private static ErrorResponse error(int status, RuntimeException e) {
    return ErrorResponse.builder()
        .responseCode(status)
        .withType(e.getClass().getSimpleName())
        .withMessage(String.valueOf(e.getMessage()))
        .build();
  }

  private <T> T read(HttpExchange exchange, Class<T> kind) throws IOException {
    try (InputStream in = exchange.getRequestBody()) {
      return mapper.readValue(in, kind);
    }
  }

  private static Map<String, String> query(HttpExchange exchange) {
    Map<String, String> out = new HashMap<>();
    String raw = exchange.getRequestURI().getRawQuery();
    if (raw != null) {
      for (String pair : raw.split("&")) {
        String[] kv = pair.split("=", 2);
        out.put(decode(kv[0]), kv.length > 1 ? decode(kv[1]) : "");
      }
    }
    return out;
  }

  private static String decode(String text) {
    return URLDecoder.decode(text, StandardCharsets.UTF_8);
  }

  private Object route(HttpExchange exchange) throws IOException {
    String method = exchange.getRequestMethod();
    List<String> path = new ArrayList<>();
    for (String part : exchange.getRequestURI().getRawPath().split("/")) {
      if (!part.isEmpty()) {
        path.add(part);
      }
    }
    if (path.isEmpty() || !"v1".equals(path.get(0))) {
      throw new NoSuchTableException("no route %s %s", method, exchange.getRequestURI());
    }
    path = path.subList(1, path.size());
    int size = path.size();
    if (size == 1 && "config".equals(path.get(0))) {
      return ConfigResponse.builder().build();
    }
    if (size == 2 && "tables".equals(path.get(0)) && "rename".equals(path.get(1))) {
      CatalogHandlers.renameTable(catalog, read(exchange, RenameTableRequest.class));
      return null;
    }
    if (size >= 1 && "namespaces".equals(path.get(0))) {
      if (size == 1) {
        if ("POST".equals(method)) {
          return CatalogHandlers.createNamespace(catalog, read(exchange, CreateNamespaceRequest.class));
        }
        String parent = query(exchange).get("parent");
        Namespace ns = parent == null ? Namespace.empty() : RESTUtil.decodeNamespace(parent);
        return CatalogHandlers.listNamespaces(catalog, ns);
      }
      Namespace ns = RESTUtil.decodeNamespace(decode(path.get(1)));
      if (size == 2) {
        switch (method) {
          case "HEAD":
            CatalogHandlers.namespaceExists(catalog, ns);
            return null;
          case "DELETE":
            CatalogHandlers.dropNamespace(catalog, ns);
            return null;
          default:
            return CatalogHandlers.loadNamespace(catalog, ns);
        }
      }
      String what = path.get(2);
      if (size == 3 && "properties".equals(what)) {
        return CatalogHandlers.updateNamespaceProperties(
            catalog, ns, read(exchange, UpdateNamespacePropertiesRequest.class));
      }
      if (size == 3 && "register".equals(what)) {
        return vend(CatalogHandlers.registerTable(
            catalog, ns, read(exchange, RegisterTableRequest.class)));
      }
      if (size == 3 && "tables".equals(what)) {
        if ("POST".equals(method)) {
          return vend(CatalogHandlers.createTable(catalog, ns, read(exchange, CreateTableRequest.class)));
        }
        return CatalogHandlers.listTables(catalog, ns);
      }
      if (size == 4 && "tables".equals(what)) {
        TableIdentifier id = TableIdentifier.of(ns, decode(path.get(3)));
        switch (method) {
          case "HEAD":
            CatalogHandlers.tableExists(catalog, id);
            return null;
          case "DELETE":
            CatalogHandlers.dropTable(catalog, id);
            return null;
          case "POST":
            return vend(CatalogHandlers.updateTable(catalog, id, read(exchange, UpdateTableRequest.class)));
          default:
            return vend(CatalogHandlers.loadTable(catalog, id));
        }
      }
    }
    throw new UnsupportedOperationException("not served: " + method + " " + exchange.getRequestURI());
  }

  private LoadTableResponse vend(LoadTableResponse response) {
    return LoadTableResponse.builder()
        .withTableMetadata(response.tableMetadata())
        .addAllConfig(response.config())
        .addAllConfig(vended)
        .build();
  }
}
